//! A feature's variants per environment: the batch write, the per-environment overwrite and
//! JSON Patch (Unleash's legacy environment variants, which its web UI edits), and the read.

pub mod types;

use flag_eval::Variant;
use flag_store::queries;
use flag_store::queries::variants::CurrentVariants;
use serde_json::Value;

use crate::catalogue::variants::types::{FeatureVariantsResponse, VariantsPush, environment_variants};
use crate::identity::auth::{Access, Caller};
use crate::runtime::domain::Permission;
use crate::{AdminError, runtime::Runtime, runtime::db};

/// Where a feature's variants in one environment stand: project, feature, environment.
type Place = (String, String, String);

/// Unleash's rule for the per-environment writes: environment variants are deprecated in favour
/// of strategy variants, so they may be written only to a feature that already has some in an
/// environment. (The batch write is not held to it.)
fn require_legacy_variants(feature: &str, current: &CurrentVariants) -> Result<(), AdminError> {
    if current.feature_has_variants {
        Ok(())
    } else {
        Err(AdminError::InvalidOperation(format!(
            "Environment variants deprecated for feature: {feature}. Use strategy variants instead."
        )))
    }
}

/// Writes the variants `change` makes of the current ones in one environment, read and written
/// in one transaction; answers with them as stored, sorted by name.
async fn change(
    ctx: &Runtime,
    caller: &Caller,
    (project, feature, environment): Place,
    change: impl FnOnce(&CurrentVariants) -> Result<Vec<Variant>, AdminError> + Send + 'static,
) -> Result<FeatureVariantsResponse, AdminError> {
    caller.require_in(&environment)?;
    let written = caller
        .write(ctx, move |conn, actor, now| {
            queries::variants::change_in_environment(
                conn,
                (&project, &feature, &environment),
                actor,
                now,
                |current| {
                    require_legacy_variants(&feature, &current)?;
                    change(&current)
                },
            )
        })
        .await??;
    Ok(FeatureVariantsResponse::from(written))
}

/// Who may replace a flag's variants in an environment.
pub const OVERWRITE: Access = Access::WriteIn(Permission::UpdateFeatureEnvironmentVariants);

/// Replaces `feature`'s variants in one environment with `body`, a list of variants.
pub async fn overwrite(
    ctx: &Runtime,
    caller: &Caller,
    place: Place,
    body: Value,
) -> Result<FeatureVariantsResponse, AdminError> {
    change(ctx, caller, place, move |_| environment_variants(body, "")).await
}

/// Who may change a flag's variants in an environment with a JSON Patch.
pub const PATCH: Access = Access::WriteIn(Permission::UpdateFeatureEnvironmentVariants);

/// Changes `feature`'s variants in one environment with a JSON Patch over the list as stored
/// (sorted by name, as `GET` answers it).
pub async fn patch(
    ctx: &Runtime,
    caller: &Caller,
    place: Place,
    operations: json_patch::Patch,
) -> Result<FeatureVariantsResponse, AdminError> {
    change(ctx, caller, place, move |current| {
        let mut document = serde_json::to_value(&current.variants)
            .map_err(|error| AdminError::Internal(format!("cannot write variants as JSON: {error}")))?;
        crate::runtime::input::apply_patch(&mut document, &operations)
            .map_err(|error| AdminError::bad_request(format!("Could not apply provided patch: {error}")))?;
        environment_variants(document, "")
    })
    .await
}

/// Who may replace a flag's variants in several environments, through [`batch`] or [`batch_push`].
pub const BATCH: Access = Access::WriteIn(Permission::UpdateFeatureEnvironmentVariants);

/// Overwrites `feature`'s variants in every environment the body names, all or none; answers
/// with the variants as sent, defaults filled in and weights normalised.
pub async fn batch(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    feature: String,
    body: Value,
) -> Result<FeatureVariantsResponse, AdminError> {
    batch_push(ctx, caller, project, feature, VariantsPush::parse(body)?).await
}

/// [`batch`] for a command already read, such as one built with [`VariantsPush::new`]; under
/// the same access, [`BATCH`].
pub async fn batch_push(
    ctx: &Runtime,
    caller: &Caller,
    project: String,
    feature: String,
    mut push: VariantsPush,
) -> Result<FeatureVariantsResponse, AdminError> {
    for environment in push.environments() {
        caller.require_in(environment)?;
    }
    push.normalise()?;
    let environments = push.environments().to_vec();
    let stored = push.variants().to_vec();
    caller
        .write(ctx, move |conn, actor, now| {
            queries::variants::set_variants_batch(
                conn,
                &project,
                &feature,
                &environments,
                &stored,
                actor,
                now,
            )
        })
        .await?;
    Ok(push.into_answer())
}

/// Who may read a flag's variants in an environment.
pub const GET: Access = Access::ReadIn(Permission::ReadFeatureEnvironmentVariants);

/// `feature`'s variants in `environment`.
pub async fn get(
    ctx: &Runtime,
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
