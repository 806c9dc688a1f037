//! Regression hunting: the ITS#10406 reproduction and bisection over tags and commits.

pub mod bisect;
pub mod coverage;
pub mod its10406;
pub mod search;
