//! Sample garment product photos (tops, trousers, dresses, outfits) and the drawn full-body
//! figures the lower-garment tests and benches use.
