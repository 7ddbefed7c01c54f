//! ParaView data collections (`.pvd`): one file that lists the snapshots of a run with their
//! times, so that ParaView opens the whole run as one time-dependent data set.

use std::io;
use std::path::Path;

use crate::output::atomic::write_atomic_with;
use crate::output::csv::format_value;
use crate::output::vtk::xml_escape;

/// One data set of a collection.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PvdEntry {
    /// Simulation time of the snapshot.
    pub time: f64,
    /// Part number: data sets with the same time and different parts are shown together
    /// (e.g. grains as part 0, walls as part 1).
    pub part: u32,
    /// Path of the data file relative to the `.pvd` file, with `/` separators.
    pub file: String,
}

/// Writes the collection `entries` to `path`, atomically, in the order given.
///
/// Rewriting the whole (small) file after every snapshot keeps it valid at all times, so a
/// run can be watched in ParaView while it goes on.
///
/// # Errors
/// Any I/O error of writing the file.
pub fn write_pvd(path: &Path, entries: &[PvdEntry]) -> io::Result<()> {
    write_atomic_with(path, |w| {
        w.write_all(
            b"<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" \
              byte_order=\"LittleEndian\">\n<Collection>\n",
        )?;
        for e in entries {
            writeln!(
                w,
                "  <DataSet timestep=\"{}\" group=\"\" part=\"{}\" file=\"{}\"/>",
                format_value(e.time),
                e.part,
                xml_escape(&e.file)
            )?;
        }
        w.write_all(b"</Collection>\n</VTKFile>\n")
    })
}

#[cfg(test)]
mod tests {
    use quick_xml::events::Event;

    use super::*;

    #[test]
    fn collection_parses_back() {
        let entries = vec![
            PvdEntry {
                time: 0.0,
                part: 0,
                file: "frames/grains_000000.vtu".into(),
            },
            PvdEntry {
                time: 0.0,
                part: 1,
                file: "frames/walls_000000.vtu".into(),
            },
            PvdEntry {
                time: 0.1 + 0.2,
                part: 0,
                file: "frames/a&b <\"x\">'.vtu".into(),
            },
        ];
        let path = std::env::temp_dir().join(format!("talus-output-{}.pvd", std::process::id()));
        write_pvd(&path, &entries).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();

        let mut reader = quick_xml::Reader::from_str(&text);
        let mut parsed = Vec::new();
        let mut saw_collection = false;
        loop {
            match reader.read_event().unwrap() {
                Event::Start(e) if e.name().as_ref() == b"VTKFile" => {
                    let kind = e.try_get_attribute("type").unwrap().unwrap();
                    assert_eq!(kind.unescape_value().unwrap(), "Collection");
                }
                Event::Start(e) if e.name().as_ref() == b"Collection" => saw_collection = true,
                Event::Empty(e) if e.name().as_ref() == b"DataSet" => {
                    let get = |key: &str| {
                        e.try_get_attribute(key)
                            .unwrap()
                            .unwrap()
                            .unescape_value()
                            .unwrap()
                            .into_owned()
                    };
                    assert_eq!(get("group"), "");
                    parsed.push(PvdEntry {
                        time: get("timestep").parse().unwrap(),
                        part: get("part").parse().unwrap(),
                        file: get("file"),
                    });
                }
                Event::Eof => break,
                _ => {}
            }
        }
        assert!(saw_collection);
        assert_eq!(parsed, entries);
    }
}
