//! Table tests.
