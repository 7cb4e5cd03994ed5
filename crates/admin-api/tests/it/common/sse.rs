//! A server-sent-events reader over a raw socket, for the streaming tests: HTTP/1.1 with a
//! chunked body, decoded as it arrives, and split into events and comments.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// One event as the SSE format defines it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// `event:`; `message` when absent.
    pub name: String,
    /// `id:`, when given.
    pub id: Option<String>,
    /// The `data:` lines, joined with newlines.
    pub data: String,
}

impl Event {
    /// The data as JSON.
    pub fn json(&self) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::from_str(&self.data)
    }
}

/// What the stream gave next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Event(Event),
    /// A comment line, without its colon.
    Comment(String),
    /// The body ended.
    End,
}

/// An open stream.
pub struct Sse {
    pub status: u16,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    reader: BufReader<TcpStream>,
    /// Decoded body bytes not yet split into lines.
    text: Vec<u8>,
    /// Bytes left in the current chunk.
    chunk_left: usize,
    ended: bool,
    /// When the stream is not chunked (an error answer): its whole body.
    pub body: String,
}

impl Sse {
    /// Sends `GET path` with `headers` and reads the answer's head; for a 200 the body is then
    /// read event by event, for anything else it is read whole into `body`.
    pub fn open(port: u16, path: &str, headers: &[(&str, &str)]) -> Result<Self, Box<dyn std::error::Error>> {
        let mut stream = TcpStream::connect(("127.0.0.1", port))?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        let mut request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n");
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        stream.write_all(request.as_bytes())?;
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let status = line
            .split_whitespace()
            .nth(1)
            .ok_or_else(|| format!("no status line: {line:?}"))?
            .parse()?;
        let mut headers = Vec::new();
        loop {
            line.clear();
            reader.read_line(&mut line)?;
            let trimmed = line.trim_end();
            if trimmed.is_empty() {
                break;
            }
            if let Some((name, value)) = trimmed.split_once(':') {
                headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
            }
        }
        let mut sse = Self {
            status,
            headers,
            reader,
            text: Vec::new(),
            chunk_left: 0,
            ended: false,
            body: String::new(),
        };
        if sse.header("transfer-encoding") != Some("chunked") {
            let length: usize = sse.header("content-length").unwrap_or("0").parse()?;
            let mut body = vec![0; length];
            sse.reader.read_exact(&mut body)?;
            sse.body = String::from_utf8(body)?;
            sse.ended = true;
        }
        Ok(sse)
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// The next event or comment, waiting at most `timeout`.
    pub fn next(&mut self, timeout: Duration) -> Result<Item, Box<dyn std::error::Error>> {
        let deadline = Instant::now() + timeout;
        let mut event = Event {
            name: "message".into(),
            id: None,
            data: String::new(),
        };
        let mut has_data = false;
        loop {
            while let Some(end) = self.text.iter().position(|&byte| byte == b'\n') {
                let bytes: Vec<u8> = self.text.drain(..=end).collect();
                let line = String::from_utf8(bytes)?;
                let line = line.trim_end_matches('\n');
                if line.is_empty() {
                    if has_data {
                        return Ok(Item::Event(event));
                    }
                    continue;
                }
                if let Some(comment) = line.strip_prefix(':') {
                    return Ok(Item::Comment(comment.to_owned()));
                }
                let (field, value) = line.split_once(':').unwrap_or((line, ""));
                let value = value.strip_prefix(' ').unwrap_or(value);
                match field {
                    "event" => event.name = value.to_owned(),
                    "id" => event.id = Some(value.to_owned()),
                    "data" => {
                        if has_data {
                            event.data.push('\n');
                        }
                        event.data.push_str(value);
                        has_data = true;
                    }
                    _ => {}
                }
            }
            if self.ended {
                return Ok(Item::End);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!("no event within {timeout:?}").into());
            }
            self.reader.get_ref().set_read_timeout(Some(left))?;
            self.read_more()?;
        }
    }

    /// The next event, skipping comments; an error at the end of the stream.
    pub fn event(&mut self, timeout: Duration) -> Result<Event, Box<dyn std::error::Error>> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.next(deadline.saturating_duration_since(Instant::now()))? {
                Item::Event(event) => return Ok(event),
                Item::Comment(_) => {}
                Item::End => return Err("the stream ended".into()),
            }
        }
    }

    /// Decodes some more of the chunked body into `text`.
    fn read_more(&mut self) -> Result<(), Box<dyn std::error::Error>> {
        if self.chunk_left == 0 {
            let mut size = String::new();
            if self.reader.read_line(&mut size)? == 0 {
                self.ended = true;
                return Ok(());
            }
            let size = usize::from_str_radix(size.trim(), 16)?;
            if size == 0 {
                self.ended = true;
                return Ok(());
            }
            self.chunk_left = size;
        }
        let mut buffer = vec![0; self.chunk_left.min(64 * 1024)];
        let read = self.reader.read(&mut buffer)?;
        if read == 0 {
            self.ended = true;
            return Ok(());
        }
        self.chunk_left -= read;
        self.text.extend_from_slice(&buffer[..read]);
        if self.chunk_left == 0 {
            let mut crlf = String::new();
            self.reader.read_line(&mut crlf)?;
        }
        Ok(())
    }
}
