//! Who may do what: API tokens and what each one may call, users and their roles, invite links
//! and signup, sessions, and single sign-on.

mod invite;
mod sealing;
mod session;
mod sso;
mod teams;
pub(crate) mod token_scope;
mod tokens;
mod users;
