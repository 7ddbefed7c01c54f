//! A corpus of broken scenario files (tests/broken/*.ron): each must give its own clear
//! error — with file, line and column for syntax and type errors, with the field's path for
//! values out of range — and never a panic. The expected fragments of each message are
//! written in the file's first lines as `// expect: …`.

use std::path::Path;

use talus_scenario::check::check;
use talus_scenario::load::read;
use talus_sim::force::ForceModelRegistry;

/// Every message `check` gives for the file, or none.
fn errors_of(path: &Path) -> Vec<String> {
    let registry = ForceModelRegistry::default();
    match read(path) {
        Err(e) => vec![e.to_string()],
        Ok(scenario) => match check(&scenario, path, &registry) {
            Ok(_) => Vec::new(),
            Err(errors) => errors.iter().map(ToString::to_string).collect(),
        },
    }
}

#[test]
fn every_broken_config_gives_its_error() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/broken");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the corpus directory exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ron"))
        .collect();
    files.sort();
    assert!(files.len() >= 20, "the corpus has {} files", files.len());
    for file in files {
        let text = std::fs::read_to_string(&file).expect("readable");
        let expected: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("// expect: "))
            .collect();
        assert!(
            !expected.is_empty(),
            "{} names no expected error",
            file.display()
        );
        let errors = errors_of(&file);
        assert!(!errors.is_empty(), "{} was accepted", file.display());
        let all = errors.join("\n");
        for fragment in expected {
            assert!(
                all.contains(fragment),
                "{}: expected '{fragment}' in:\n{all}",
                file.display()
            );
        }
        // Every message says what is allowed, or where the text is wrong.
        for e in &errors {
            let name = file.file_name().unwrap().to_string_lossy().to_string();
            assert!(
                e.contains("allowed") || e.contains(&format!("{name}:")),
                "{}: the message neither locates the problem nor says what is allowed: {e}",
                file.display()
            );
        }
    }
}
