//! What can go wrong in the garment stage.

/// Why the garment pipeline could not dress the person.
#[derive(Debug, thiserror::Error)]
pub enum GarmentError {
    /// No garment could be separated from the product photo's background.
    #[error("no garment was found in the product photo: {0}")]
    NoGarment(String),
    /// The photo lacks what a garment needs (a body, shoulders).
    #[error("{0}")]
    NoBody(String),
    /// A spline could not be solved (degenerate control points).
    #[error("the garment warp could not be solved: {0}")]
    Degenerate(String),
    /// The GPU kernel failed.
    #[error("the garment warp failed on the GPU: {0}")]
    Gpu(String),
}
