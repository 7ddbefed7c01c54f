//! ParaView data collections (`.pvd`): one file that lists the snapshots of a run with their
//! times, so that ParaView opens the whole run as one time-dependent data set.

use std::fs::OpenOptions;
use std::io::{self, Read, Seek, SeekFrom, Write};
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

/// The text before the first entry.
const HEAD: &[u8] = b"<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" \
      byte_order=\"LittleEndian\">\n<Collection>\n";
/// The text after the last entry.
const TAIL: &[u8] = b"</Collection>\n</VTKFile>\n";

/// Writes the collection `entries` to `path`, atomically, in the order given.
///
/// # Errors
/// Any I/O error of writing the file.
pub fn write_pvd(path: &Path, entries: &[PvdEntry]) -> io::Result<()> {
    write_atomic_with(path, |w| {
        w.write_all(HEAD)?;
        write_entries(w, entries)?;
        w.write_all(TAIL)
    })
}

/// Adds `new` to the collection at `path`, which holds `entries` before them.
///
/// A run adds a frame at a time, so rewriting the whole file each time would cost time
/// quadratic in the number of frames. Instead the closing tags at the end of the file are
/// overwritten by the new entries followed by the closing tags, in one write, and synced:
/// the file is valid before and after, so a run can be watched in ParaView while it goes
/// on. A crash in the middle of that write can leave the file without its closing tags;
/// a resumed run writes it whole again. A file that does not end as this writer leaves it
/// (missing, or changed by someone else) is written whole, atomically.
///
/// # Errors
/// Any I/O error of reading or writing the file.
pub fn append_pvd(path: &Path, entries: &[PvdEntry], new: &[PvdEntry]) -> io::Result<()> {
    let all = || entries.iter().chain(new).cloned().collect::<Vec<_>>();
    let mut file = match OpenOptions::new().read(true).write(true).open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return write_pvd(path, &all()),
        Err(e) => return Err(e),
    };
    let len = file.metadata()?.len();
    let tail_len = TAIL.len() as u64;
    let mut end = vec![0u8; TAIL.len()];
    let ends_with_tail = len >= tail_len + HEAD.len() as u64
        && file
            .seek(SeekFrom::Start(len - tail_len))
            .and_then(|_| file.read_exact(&mut end))
            .is_ok()
        && end == TAIL;
    if !ends_with_tail {
        drop(file);
        return write_pvd(path, &all());
    }
    let mut text = Vec::new();
    write_entries(&mut text, new)?;
    text.extend_from_slice(TAIL);
    file.seek(SeekFrom::Start(len - tail_len))?;
    file.write_all(&text)?;
    file.sync_data()
}

fn write_entries(w: &mut dyn Write, entries: &[PvdEntry]) -> io::Result<()> {
    for e in entries {
        writeln!(
            w,
            "  <DataSet timestep=\"{}\" group=\"\" part=\"{}\" file=\"{}\"/>",
            format_value(e.time),
            e.part,
            xml_escape(&e.file)
        )?;
    }
    Ok(())
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
        let whole = std::fs::read_to_string(&path).unwrap();
        // The same collection written an entry at a time, and with a damaged end.
        std::fs::remove_file(&path).unwrap();
        for k in 0..entries.len() {
            append_pvd(&path, &entries[..k], &entries[k..=k]).unwrap();
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), whole);
        std::fs::write(&path, &whole[..whole.len() - 3]).unwrap();
        append_pvd(&path, &entries[..2], &entries[2..]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, whole);
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
