//! Server-sent events read off a byte stream, line by line.

use std::io::{self, BufRead, Read};

/// Most bytes one event may hold by default: a hydration of 10,000 flags is about 5 MB on one
/// line.
pub(crate) const LINE_LIMIT: u64 = 64 << 20;

/// What the stream gave next.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Item {
    /// An event: its name (`message` when none was given), its id, and its data lines joined.
    Event {
        name: String,
        id: Option<String>,
        data: String,
    },
    /// A comment: a heartbeat.
    Comment,
}

/// Reads `reader` as server-sent events.
pub(crate) struct Reader<R> {
    reader: R,
    limit: u64,
}

impl<R: BufRead> Reader<R> {
    #[cfg(test)]
    pub fn new(reader: R) -> Self {
        Self::with_limit(reader, LINE_LIMIT)
    }

    /// A reader refusing events of more than `limit` bytes.
    pub fn with_limit(reader: R, limit: u64) -> Self {
        Self { reader, limit }
    }

    /// The next event or comment; `None` at the end of the stream.
    pub fn next(&mut self) -> io::Result<Option<Item>> {
        let mut name = None;
        let mut id = None;
        let mut data: Option<String> = None;
        let mut line = String::new();
        loop {
            line.clear();
            let read = Read::take(&mut self.reader, self.limit).read_line(&mut line)?;
            if read == 0 {
                return Ok(None);
            }
            let text = line.trim_end_matches(['\n', '\r']);
            if text.is_empty() {
                if let Some(data) = data.take() {
                    return Ok(Some(Item::Event {
                        name: name.take().unwrap_or_else(|| "message".into()),
                        id: id.take(),
                        data,
                    }));
                }
                name = None;
                continue;
            }
            if text.starts_with(':') {
                if data.is_none() && name.is_none() {
                    return Ok(Some(Item::Comment));
                }
                continue;
            }
            let (field, value) = text.split_once(':').unwrap_or((text, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "event" => name = Some(value.to_owned()),
                "id" => id = Some(value.to_owned()),
                "data" => match &mut data {
                    Some(data) => {
                        if data.len() as u64 + value.len() as u64 > self.limit {
                            return Err(io::Error::new(io::ErrorKind::InvalidData, "an event over 64 MiB"));
                        }
                        data.push('\n');
                        data.push_str(value);
                    }
                    None => data = Some(value.to_owned()),
                },
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_events_comments_and_the_end() -> io::Result<()> {
        let text = "event: unleash-connected\nid: 4\ndata: {\"events\":[]}\n\n:keep-alive\n\nevent: fetch-mode\ndata: polling\n\ndata: a\ndata: b\n\n";
        let mut reader = Reader::new(text.as_bytes());
        assert_eq!(
            reader.next()?,
            Some(Item::Event {
                name: "unleash-connected".into(),
                id: Some("4".into()),
                data: "{\"events\":[]}".into()
            })
        );
        assert_eq!(reader.next()?, Some(Item::Comment));
        assert_eq!(
            reader.next()?,
            Some(Item::Event {
                name: "fetch-mode".into(),
                id: None,
                data: "polling".into()
            })
        );
        assert_eq!(
            reader.next()?,
            Some(Item::Event {
                name: "message".into(),
                id: None,
                data: "a\nb".into()
            })
        );
        assert_eq!(reader.next()?, None);
        Ok(())
    }
}
