//! The client API's answers, serialised and compressed once per store revision.
//!
//! SDKs poll `GET /api/client/features` every few seconds and almost always get the same
//! document. Each distinct question (environment, projects, name prefix, segment form) has one
//! slot per revision holding the answer as shared bytes, plain, gzip and brotli, with its
//! `ETag`. A request then costs a token check in memory, an `ETag` comparison, and writing bytes
//! that are already there: no database work, no serialisation, no copy.
//!
//! The first request for a question at a new revision builds the answer; the requests that
//! arrive meanwhile wait for that one build instead of starting their own.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use actix_web::body::BoxBody;
use actix_web::http::header::{
    self, AcceptEncoding, ContentEncoding, ETAG, Encoding, Header as _, HeaderValue, VARY,
};
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, Responder};
use tokio::sync::OnceCell;

use crate::dto::client::ClientFeaturesQuery;
use crate::error::ApiError;

/// A JSON answer in every encoding it is sent in, each made once.
#[derive(Debug)]
pub struct Precompressed {
    identity: Bytes,
    gzip: Bytes,
    brotli: Bytes,
}

impl Precompressed {
    /// Compresses `json` with gzip and brotli at levels that keep a 5 MB document's build
    /// under a tenth of a second while shrinking it about fifty times; brotli's window is 1 MiB,
    /// which bounds the memory a build takes.
    pub fn new(json: Vec<u8>) -> std::io::Result<Self> {
        let mut gzip =
            flate2::write::GzEncoder::new(Vec::with_capacity(json.len() / 8), flate2::Compression::new(6));
        gzip.write_all(&json)?;
        let gzip = gzip.finish()?;
        let mut brotli = Vec::with_capacity(json.len() / 8);
        {
            let mut writer = brotli::CompressorWriter::new(&mut brotli, 64 * 1024, 5, 20);
            writer.write_all(&json)?;
            writer.flush()?;
        }
        Ok(Self {
            identity: Bytes::from(json),
            gzip: Bytes::from(gzip),
            brotli: Bytes::from(brotli),
        })
    }

    /// The encoding `request` prefers among brotli, gzip and none, with its bytes.
    fn negotiate(&self, request: &HttpRequest) -> (ContentEncoding, &Bytes) {
        let accepted = AcceptEncoding::parse(request).ok();
        let preferred = accepted.and_then(|accepted| {
            accepted.negotiate([Encoding::brotli(), Encoding::gzip(), Encoding::identity()].iter())
        });
        match preferred {
            Some(encoding) if encoding == Encoding::brotli() => (ContentEncoding::Brotli, &self.brotli),
            Some(encoding) if encoding == Encoding::gzip() => (ContentEncoding::Gzip, &self.gzip),
            _ => (ContentEncoding::Identity, &self.identity),
        }
    }
}

/// One cached client-API answer.
#[derive(Debug)]
pub struct Answer {
    /// Its `ETag`, quoted.
    pub etag: String,
    /// A digest of what the answer says, its revision apart: an answer rebuilt after a write
    /// that did not change it keeps the earlier answer, `ETag` included.
    pub digest: [u8; 32],
    /// The document.
    pub body: Precompressed,
}

/// An answer slot for one question at one revision; filled once.
#[derive(Debug)]
struct Slot {
    revision: i32,
    answer: OnceCell<Arc<Answer>>,
    /// The answer of the slot this one replaced, if it was built.
    previous: Option<Arc<Answer>>,
    /// When it was last asked for, on the cache's clock.
    used: AtomicU64,
}

/// The client-API answers by question, each for the latest revision it was asked at.
///
/// At most [`AnswerCache::CAPACITY`] questions are kept. A new question past that first drops
/// the answers of older revisions, then the answer asked for least recently; a dropped answer
/// is rebuilt by its next request.
#[derive(Debug, Default)]
pub struct AnswerCache {
    slots: Mutex<HashMap<ClientFeaturesQuery, Arc<Slot>>>,
    /// Counts requests, to know which answer was asked for least recently.
    clock: AtomicU64,
}

impl AnswerCache {
    /// Most questions kept at once.
    pub const CAPACITY: usize = 64;

    fn slot(&self, question: &ClientFeaturesQuery, revision: i32) -> Arc<Slot> {
        let now = self.clock.fetch_add(1, Ordering::Relaxed);
        let mut slots = self
            .slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(slot) = slots.get(question).filter(|slot| slot.revision >= revision) {
            slot.used.store(now, Ordering::Relaxed);
            return Arc::clone(slot);
        }
        if slots.len() >= Self::CAPACITY && !slots.contains_key(question) {
            slots.retain(|_, slot| slot.revision >= revision);
            if slots.len() >= Self::CAPACITY {
                let oldest = slots
                    .iter()
                    .min_by_key(|(_, slot)| slot.used.load(Ordering::Relaxed))
                    .map(|(question, _)| question.clone());
                if let Some(oldest) = oldest {
                    slots.remove(&oldest);
                }
            }
        }
        let previous = slots
            .get(question)
            .and_then(|slot| slot.answer.get())
            .map(Arc::clone);
        let slot = Arc::new(Slot {
            revision,
            answer: OnceCell::new(),
            previous,
            used: AtomicU64::new(now),
        });
        slots.insert(question.clone(), Arc::clone(&slot));
        slot
    }

    /// The answer to `question` at `revision` (or later), built by `build` when no request has
    /// built it yet. `build` is given the answer this one replaces, to keep when it says the
    /// same.
    pub async fn get_or_build<F, Fut>(
        &self,
        question: &ClientFeaturesQuery,
        revision: i32,
        build: F,
    ) -> Result<Arc<Answer>, ApiError>
    where
        F: FnOnce(Option<Arc<Answer>>) -> Fut,
        Fut: Future<Output = Result<Arc<Answer>, ApiError>>,
    {
        let slot = self.slot(question, revision);
        slot.answer
            .get_or_try_init(|| build(slot.previous.clone()))
            .await
            .map(Arc::clone)
    }

    /// How many questions have an answer slot.
    pub fn len(&self) -> usize {
        self.slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len()
    }

    /// Whether none has.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// 200 with a cached answer in the encoding the client prefers, or 304 when `If-None-Match`
/// names its `ETag`.
#[derive(Debug)]
pub struct Cached(pub Arc<Answer>);

impl Responder for Cached {
    type Body = BoxBody;

    fn respond_to(self, request: &HttpRequest) -> HttpResponse {
        let answer = self.0;
        if crate::respond::Tagged::<()>::is_current(request, &answer.etag) {
            return HttpResponse::NotModified()
                .insert_header((ETAG, answer.etag.as_str()))
                .finish();
        }
        let (encoding, bytes) = answer.body.negotiate(request);
        let mut response = HttpResponse::Ok();
        response
            .insert_header((ETAG, answer.etag.as_str()))
            .insert_header((header::CONTENT_TYPE, HeaderValue::from_static("application/json")))
            .insert_header((VARY, HeaderValue::from_static("Accept-Encoding")));
        // A named encoding keeps the `Compress` middleware away from bytes already compressed;
        // plain bytes are left to it, for a client that accepts only another encoding.
        if encoding != ContentEncoding::Identity {
            response.insert_header((header::CONTENT_ENCODING, encoding.to_header_value()));
        }
        response.body(bytes.clone())
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read as _;

    use super::*;

    #[test]
    fn both_encodings_decompress_to_the_plain_bytes() {
        let json =
            serde_json::to_vec(&serde_json::json!({"features": vec!["a long repeated flag name"; 500]}))
                .unwrap_or_default();
        let answer = Precompressed::new(json.clone()).unwrap_or_else(|error| panic!("{error}"));
        let mut gunzipped = Vec::new();
        flate2::read::GzDecoder::new(&answer.gzip[..])
            .read_to_end(&mut gunzipped)
            .unwrap_or_else(|error| panic!("{error}"));
        let mut unbrotlied = Vec::new();
        brotli::Decompressor::new(&answer.brotli[..], 4096)
            .read_to_end(&mut unbrotlied)
            .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(gunzipped, json);
        assert_eq!(unbrotlied, json);
        assert!(
            answer.gzip.len() * 10 < json.len(),
            "gzip is {} bytes",
            answer.gzip.len()
        );
    }
}
