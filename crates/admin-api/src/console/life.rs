//! A flag's life, on its page: its lifecycle stage with the date it entered it, stale or not,
//! its tags, its parent, and copying it under a new name. Each form posts to one operation
//! of the API and comes back to the flag; a refusal is shown on the flag's page.

use actix_web::{HttpRequest, HttpResponse, web};
use flag_admin::catalogue::dependencies::types::AddDependency;
use flag_admin::catalogue::features::types::{BatchStale, CloneFeature, FeatureDetailOut, LifecycleOut};
use flag_admin::catalogue::tags::types::{FeatureTagsOut, TagIn, TagTypesOut};
use flag_admin::identity::auth::Principal;
use flag_admin::runtime::domain::{ResourceName, TagTypeName, TagValue};
use flag_admin::{
    AdminError, catalogue::archive, catalogue::dependencies, catalogue::features, catalogue::tags,
};
use maud::{Markup, html};

use super::{form_fields, poster, see_other, url_escape};
use crate::state::AppState;

/// Past this many flags a parent is typed by name rather than chosen from a list.
const PARENT_CHOICES: usize = 200;

fn flag_path(project: &str, feature: &str) -> String {
    format!("/flags/{}/{}", url_escape(project), url_escape(feature))
}

/// What the life card offers, by what the signed-in user may do.
pub struct Offers {
    /// The flag's tags.
    pub tags: FeatureTagsOut,
    /// The tag types to tag with.
    pub tag_types: TagTypesOut,
    /// Flags it may depend on.
    pub parents: Vec<String>,
    /// The lifecycle stages it entered, in order, with when.
    pub stages: Vec<LifecycleOut>,
}

/// The card: stage, stale, tags, parent, copy.
pub fn card(detail: &FeatureDetailOut, offers: &Offers, principal: &Principal) -> Markup {
    let may = |access: flag_admin::identity::auth::Access| {
        access.admit_in(principal.clone(), Some(&detail.project)).is_ok()
    };
    let path = flag_path(&detail.project, &detail.name);
    html! {
        section.card aria-labelledby="life" {
            h2 id="life" { "Its life" }
            dl.facts {
                dt { "Stage" }
                dd {
                    @if let Some(lifecycle) = &detail.lifecycle {
                        (lifecycle.stage)
                        @if let Some(status) = &lifecycle.status { " (" (status) ")" }
                        " since " (lifecycle.entered_stage_at.get(..10).unwrap_or(&lifecycle.entered_stage_at))
                    } @else { "unknown" }
                    @if offers.stages.len() > 1 {
                        ol.stages aria-label="Stages it went through" {
                            @for stage in &offers.stages {
                                li { (stage.stage) " " span.muted { (stage.entered_stage_at.get(..16).unwrap_or(&stage.entered_stage_at).replace('T', " ")) } }
                            }
                        }
                    }
                }
                dt { "Stale" }
                dd {
                    (if detail.stale { "yes: due for removal from the code" } else { "no" })
                    @if may(archive::STALE_MANY) {
                        form.inline method="post" action=(format!("{path}/stale")) {
                            input type="hidden" name="stale" value=(if detail.stale { "false" } else { "true" });
                            " " button.secondary type="submit" { (if detail.stale { "Mark as not stale" } else { "Mark as stale" }) }
                        }
                    }
                }
                dt { "Tags" }
                dd {
                    @if offers.tags.tags.is_empty() { span.muted { "none" } }
                    ul.tags {
                        @for tag in &offers.tags.tags {
                            li {
                                a href=(format!("/flags?project={}&tag={}", url_escape(&detail.project), url_escape(&format!("{}:{}", tag.tag_type, tag.value))))
                                    { span.mono { (tag.tag_type) ":" (tag.value) } }
                                @if may(tags::REMOVE_FROM_FEATURE) {
                                    form.inline method="post" action=(format!("{path}/tags/delete")) {
                                        input type="hidden" name="type" value=(tag.tag_type);
                                        input type="hidden" name="value" value=(tag.value);
                                        " " button.secondary type="submit" aria-label=(format!("Remove tag {}:{}", tag.tag_type, tag.value)) { "×" }
                                    }
                                }
                            }
                        }
                    }
                    @if may(tags::ADD_TO_FEATURE) && !offers.tag_types.tag_types.is_empty() {
                        form.row method="post" action=(format!("{path}/tags")) {
                            div {
                                label for="tag-type" { "Tag type" }
                                select id="tag-type" name="type" {
                                    @for kind in &offers.tag_types.tag_types { option value=(kind.name) { (kind.name) } }
                                }
                            }
                            div {
                                label for="tag-value" { "Value" }
                                input id="tag-value" name="value" type="text" required;
                            }
                            button type="submit" { "Add the tag" }
                        }
                    }
                }
                dt { "Depends on" }
                dd {
                    @if detail.dependencies.is_empty() { span.muted { "no other flag" } }
                    @for parent in &detail.dependencies {
                        span.mono { (parent.feature) } " being "
                        (if parent.enabled { "enabled" } else { "disabled" })
                        @if !parent.variants.is_empty() { " with variant " (parent.variants.join(" or ")) }
                        @if may(dependencies::REMOVE) {
                            form.inline method="post" action=(format!("{path}/dependencies/delete")) {
                                " " button.secondary type="submit" { "Remove the dependency" }
                            }
                        }
                    }
                    @if may(dependencies::ADD) && detail.dependencies.is_empty() {
                        @if offers.parents.is_empty() {
                            p.muted { "No flag of this project can be its parent." }
                        } @else {
                            form.row method="post" action=(format!("{path}/dependencies")) {
                                div {
                                    label for="parent" { "Parent flag" }
                                    @if offers.parents.len() <= PARENT_CHOICES {
                                        select id="parent" name="feature" {
                                            @for parent in &offers.parents { option value=(parent) { (parent) } }
                                        }
                                    } @else {
                                        input id="parent" name="feature" type="text" required
                                            placeholder=(format!("one of {} flags of this project, by name", offers.parents.len()));
                                    }
                                }
                                div {
                                    label for="parent-state" { "Needs it" }
                                    select id="parent-state" name="enabled" {
                                        option value="true" { "enabled" }
                                        option value="false" { "disabled" }
                                    }
                                }
                                div {
                                    label for="parent-variants" { "With variants (comma-separated, optional)" }
                                    input id="parent-variants" name="variants" type="text";
                                }
                                button type="submit" { "Add the dependency" }
                            }
                        }
                    }
                    @if !detail.children.is_empty() {
                        p { "Flags that depend on it: " (detail.children.join(", ")) }
                    }
                }
            }
            @if may(features::CLONE) {
                details {
                    summary { "Copy this flag" }
                    form.row method="post" action=(format!("{path}/clone")) {
                        div {
                            label for="clone-name" { "New flag's name" }
                            input id="clone-name" name="name" type="text" required;
                        }
                        button type="submit" { "Copy, switched off everywhere" }
                    }
                }
            }
        }
    }
}

/// `POST /flags/{project}/{feature}/{what}` for `stale`, `clone`, `tags`, `tags/delete`,
/// `dependencies` and `dependencies/delete`.
pub async fn post(
    state: web::Data<AppState>,
    request: HttpRequest,
    path: web::Path<(String, String, String)>,
    body: web::Bytes,
) -> HttpResponse {
    let principal = match poster(&state, &request).await {
        Ok(principal) => principal,
        Err(page) => return page,
    };
    let (project, feature, what) = path.into_inner();
    let fields = form_fields(&body);
    let get = |name: &str| super::field(&fields, name);
    let result: Result<Option<String>, AdminError> = async {
        match what.as_str() {
            "stale" => {
                let caller = archive::STALE_MANY.admit_in(principal.clone(), Some(&project))?;
                let request = BatchStale {
                    features: vec![feature.clone()],
                    stale: get("stale") == "true",
                };
                archive::stale_many(&state.app, &caller, project.clone(), request).await?;
                Ok(None)
            }
            "clone" => {
                let caller = features::CLONE.admit_in(principal.clone(), Some(&project))?;
                let name = ResourceName::try_from(get("name").as_str())
                    .map_err(|problem| AdminError::invalid("/name", format!("the name {problem}")))?;
                let request = CloneFeature {
                    name,
                    replace_group_id: true,
                };
                let made =
                    features::clone(&state.app, &caller, (project.clone(), feature.clone()), request).await?;
                Ok(Some(made.name))
            }
            "tags" | "tags/delete" => {
                // Tags are written by the flag's name alone: admitted by a role in this
                // project, the flag must be one of it.
                let reader = features::GET.admit(principal.clone())?;
                features::get(
                    &state.app,
                    &reader,
                    (project.clone(), feature.clone()),
                    Default::default(),
                )
                .await?;
                let tag_type = TagTypeName::try_from(get("type").as_str())
                    .map_err(|problem| AdminError::invalid("/type", format!("the tag type {problem}")))?;
                let value = TagValue::try_from(get("value").as_str())
                    .map_err(|problem| AdminError::invalid("/value", format!("the tag {problem}")))?;
                if what == "tags" {
                    let caller = tags::ADD_TO_FEATURE.admit_in(principal.clone(), Some(&project))?;
                    let request = TagIn {
                        value,
                        tag_type,
                        color: None,
                    };
                    tags::add_to_feature(&state.app, &caller, feature.clone(), request).await?;
                } else {
                    let caller = tags::REMOVE_FROM_FEATURE.admit_in(principal.clone(), Some(&project))?;
                    tags::remove_from_feature(
                        &state.app,
                        &caller,
                        (feature.clone(), tag_type.into_string(), value.into_string()),
                    )
                    .await?;
                }
                Ok(None)
            }
            "dependencies" => {
                let caller = dependencies::ADD.admit_in(principal.clone(), Some(&project))?;
                let request = AddDependency {
                    feature: get("feature"),
                    enabled: Some(get("enabled") != "false"),
                    variants: super::comma_list(&get("variants")),
                };
                dependencies::add(&state.app, &caller, project.clone(), feature.clone(), request).await?;
                Ok(None)
            }
            "dependencies/delete" => {
                let caller = dependencies::REMOVE.admit_in(principal.clone(), Some(&project))?;
                dependencies::remove(&state.app, &caller, project.clone(), feature.clone()).await?;
                Ok(None)
            }
            _ => Err(AdminError::NotFound("no such page".into())),
        }
    }
    .await;
    match result {
        Ok(Some(copy)) => see_other(&flag_path(&project, &copy)),
        Ok(None) => see_other(&format!("{}#life", flag_path(&project, &feature))),
        Err(error) => super::flag::refused(&state, &principal, &project, &feature, &error).await,
    }
}
