//! Whether the application can serve: `runtime::health`, on the backend under test.

use flag_admin::AdminError;
use flag_admin::runtime::health;

use crate::common::{Outcome, World};

#[tokio::test]
async fn the_application_is_ready_while_its_database_answers() -> Outcome {
    let world = World::new()?;
    health::ready(&world.ctx).await?;
    // A database without the tables the application reads cannot serve it.
    flag_store::revert_all(&mut *world.store().connection()?)?;
    let unready = health::ready(&world.ctx).await;
    assert!(matches!(unready, Err(AdminError::Internal(_))), "{unready:?}");
    Ok(())
}
