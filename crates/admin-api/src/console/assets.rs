//! The console's stylesheet and script, compiled into the binary and served under names that
//! carry a digest of their content, so browsers may keep them for a year: a new build names
//! them anew.

use std::sync::LazyLock;

use actix_web::http::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use actix_web::{HttpRequest, HttpResponse, web};
use sha2::{Digest, Sha256};

/// One embedded file.
pub struct Asset {
    stem: &'static str,
    extension: &'static str,
    content_type: &'static str,
    bytes: &'static [u8],
}

/// The stylesheet.
pub static STYLESHEET: Asset = Asset {
    stem: "console",
    extension: "css",
    content_type: "text/css; charset=utf-8",
    bytes: include_bytes!("../../assets/console.css"),
};

/// The script.
pub static SCRIPT: Asset = Asset {
    stem: "console",
    extension: "js",
    content_type: "text/javascript; charset=utf-8",
    bytes: include_bytes!("../../assets/console.js"),
};

/// Each asset's name with its digest: `console-1a2b3c4d5e6f.css`.
static NAMES: LazyLock<[(String, &'static Asset); 2]> =
    LazyLock::new(|| [(name(&STYLESHEET), &STYLESHEET), (name(&SCRIPT), &SCRIPT)]);

fn name(asset: &Asset) -> String {
    let digest = hex::encode(Sha256::digest(asset.bytes));
    format!("{}-{}.{}", asset.stem, &digest[..12], asset.extension)
}

/// The URL pages link `asset` by.
pub fn url(asset: &'static Asset) -> String {
    let name = NAMES
        .iter()
        .find(|(_, known)| std::ptr::eq(*known, asset))
        .map_or_else(|| name(asset), |(name, _)| name.clone());
    format!("/console/{name}")
}

/// `GET /console/{file}`: an asset by its digest name, cached for a year; 304 when the browser
/// has it.
pub async fn serve(request: HttpRequest, file: web::Path<String>) -> HttpResponse {
    let Some((name, asset)) = NAMES.iter().find(|(name, _)| *name == *file) else {
        return HttpResponse::NotFound()
            .insert_header((CONTENT_TYPE, "text/plain; charset=utf-8"))
            .body("no such file");
    };
    let etag = format!("\"{name}\"");
    let cached = request
        .headers()
        .get(IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.split(',').any(|tag| tag.trim() == etag));
    let mut response = if cached {
        HttpResponse::NotModified()
    } else {
        HttpResponse::Ok()
    };
    response
        .insert_header((CACHE_CONTROL, "public, max-age=31536000, immutable"))
        .insert_header((ETAG, etag));
    if cached {
        return response.finish();
    }
    response
        .insert_header((CONTENT_TYPE, asset.content_type))
        .body(asset.bytes)
}
