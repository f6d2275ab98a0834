//! PyO3 module (filled in later).
