//! `report.html` of a real run: every plot of `plots/` embedded as a PNG that decodes to the
//! plot's size, the scenario's name (escaped) and status on the page, links to the run's
//! files; and the page rendered by headless Chromium (skipped, saying so, where Chromium is
//! not installed; `.ci/run` installs it).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine;
use common::{talus, text};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("talus-report-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The decoded PNGs of the page's `data:image/png;base64,` images, in order.
fn embedded_images(html: &str) -> Vec<(u32, u32, Vec<u8>)> {
    let marker = "src=\"data:image/png;base64,";
    html.match_indices(marker)
        .map(|(at, _)| {
            let start = at + marker.len();
            let end = start + html[start..].find('"').expect("the attribute is closed");
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(&html[start..end])
                .expect("standard base64");
            decode_png(&bytes)
        })
        .collect()
}

fn decode_png(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("a size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

fn hopper_run(out: &Path) {
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/hopper.ron");
    let o = talus(&[
        "run",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
        "--set",
        "time.end=0.4",
        "--set",
        "grains[0].count=150",
        "--set",
        "name=\"hopper <script>x</script>\"",
    ]);
    // A short discharge may be suspect (exit 3); the page is written either way.
    assert!(
        matches!(o.status.code(), Some(0 | 3)),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn the_report_embeds_every_plot_and_names_the_run() {
    let dir = scratch("page");
    let out = dir.join("run");
    hopper_run(&out);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let plots = std::fs::read_dir(out.join("plots")).unwrap().count();
    let images = embedded_images(&html);
    assert!(plots > 0);
    assert_eq!(images.len(), plots, "one image per plot");
    for (w, h, _) in &images {
        assert_eq!((*w, *h), (800, 600));
    }
    assert!(html.contains("hopper &lt;script&gt;x&lt;/script&gt;"));
    assert!(!html.contains("<script>x"), "user text is escaped");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert!(html.contains(summary["status"].as_str().unwrap()));
    for link in ["timeseries.csv", "summary.json", "scenario.ron"] {
        assert!(html.contains(&format!("href=\"{link}\"")), "{link}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn chromium_renders_the_report() {
    let chromium = Path::new("/usr/bin/chromium");
    if !chromium.exists() {
        eprintln!("chromium not installed; skipping the browser rendering check");
        return;
    }
    let dir = scratch("browser");
    let out = dir.join("run");
    hopper_run(&out);
    let shot = dir.join("page.png");
    let page = format!("file://{}", out.join("report.html").display());
    let o = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1200,4000",
        ])
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&page)
        .output()
        .expect("chromium starts");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (w, h, pixels) = decode_png(&std::fs::read(&shot).expect("a screenshot"));
    assert_eq!((w, h), (1200, 4000));
    // Not a blank page: many colours, among them the plots' first series colour.
    let channels = pixels.len() / (w * h) as usize;
    let colours: std::collections::BTreeSet<&[u8]> =
        pixels.chunks_exact(channels).map(|p| &p[..3]).collect();
    assert!(colours.len() > 50, "{} colours", colours.len());
    assert!(colours.contains(&[31u8, 119, 180][..]), "no plot was drawn");
    let _ = std::fs::remove_dir_all(dir);
}
