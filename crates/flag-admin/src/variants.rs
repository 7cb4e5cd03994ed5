//! A feature's variants per environment: the batch write and the read.

use flag_store::queries;
use serde_json::Value;

use crate::auth::Caller;
use crate::dto::variants::{FeatureVariantsResponse, VariantsPush};
use crate::{AdminError, Ctx, db};

/// Overwrites `feature`'s variants in every environment the body names, all or none; answers
/// with the variants as sent, defaults filled in and weights normalised.
pub async fn batch(
    ctx: &Ctx,
    caller: &Caller,
    project: String,
    feature: String,
    body: Value,
) -> Result<FeatureVariantsResponse, AdminError> {
    let mut push = VariantsPush::parse(body)?;
    for environment in push.environments() {
        caller.require_in(environment)?;
    }
    push.normalise()?;
    let actor = caller.actor();
    let now = crate::now();
    let environments = push.environments().to_vec();
    let stored = push.variants().to_vec();
    db::run(&ctx.store, move |conn| {
        queries::variants::set_variants_batch(conn, &project, &feature, &environments, &stored, &actor, now)
    })
    .await?;
    Ok(push.into_answer())
}

/// `feature`'s variants in `environment`.
pub async fn get(
    ctx: &Ctx,
    caller: &Caller,
    (project, feature, environment): (String, String, String),
) -> Result<FeatureVariantsResponse, AdminError> {
    caller.require_in(&environment)?;
    let variants = db::run(&ctx.store, move |conn| {
        queries::variants::get(conn, &project, &feature, &environment)
    })
    .await?;
    Ok(FeatureVariantsResponse::from(variants))
}
