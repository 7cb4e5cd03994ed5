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

use std::io::Write as _;
use std::sync::Arc;

use actix_web::body::BoxBody;
use actix_web::http::header::{
    self, AcceptEncoding, ContentEncoding, ETAG, Encoding, Header as _, HeaderValue, VARY,
};
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, Responder};

use flag_admin::delivery::client::types::ClientFeaturesQuery;
use flag_admin::runtime::cache::RevisionCache;

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

/// Client-API answers by question, as of the store's revision: at most [`CAPACITY`] of them.
pub type AnswerCache = RevisionCache<ClientFeaturesQuery, Answer>;

/// Most answers kept.
pub const CAPACITY: usize = 64;

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
