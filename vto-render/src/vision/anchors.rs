//! SSD anchors, as MediaPipe's `SsdAnchorsCalculator` generates them for BlazeFace and
//! BlazePose (options from `face_detection_*.pbtxt` and `pose_detection_cpu.pbtxt`).

/// Options of the anchor grid (the subset the three detectors use).
#[derive(Debug, Clone, PartialEq)]
pub struct AnchorOptions {
    /// Model input width.
    pub input_width: u32,
    /// Model input height.
    pub input_height: u32,
    /// Smallest anchor scale.
    pub min_scale: f32,
    /// Largest anchor scale.
    pub max_scale: f32,
    /// Stride of each layer; consecutive layers with one stride share a feature map.
    pub strides: Vec<u32>,
    /// Aspect ratios per layer.
    pub aspect_ratios: Vec<f32>,
    /// Adds one anchor per location at the geometric mean of this and the next scale when > 0.
    pub interpolated_scale_aspect_ratio: f32,
    /// Anchor centre offset within a cell (x and y).
    pub anchor_offset: f32,
    /// All anchors have width and height 1 (all three detectors).
    pub fixed_anchor_size: bool,
}

impl AnchorOptions {
    /// BlazeFace short range (128×128): 896 anchors.
    pub fn face_short_range() -> Self {
        Self {
            input_width: 128,
            input_height: 128,
            min_scale: 0.1484375,
            max_scale: 0.75,
            strides: vec![8, 16, 16, 16],
            aspect_ratios: vec![1.0],
            interpolated_scale_aspect_ratio: 1.0,
            anchor_offset: 0.5,
            fixed_anchor_size: true,
        }
    }

    /// BlazeFace full range (192×192): 2304 anchors.
    pub fn face_full_range() -> Self {
        Self {
            input_width: 192,
            input_height: 192,
            strides: vec![4],
            interpolated_scale_aspect_ratio: 0.0,
            ..Self::face_short_range()
        }
    }

    /// BlazePose detector (224×224): 2254 anchors.
    pub fn pose() -> Self {
        Self {
            input_width: 224,
            input_height: 224,
            strides: vec![8, 16, 32, 32, 32],
            interpolated_scale_aspect_ratio: 1.0,
            ..Self::face_short_range()
        }
    }
}

/// One anchor, in normalized input coordinates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Anchor {
    /// Centre x in [0, 1].
    pub x_center: f32,
    /// Centre y in [0, 1].
    pub y_center: f32,
    /// Width (1 with fixed anchor size).
    pub w: f32,
    /// Height.
    pub h: f32,
}

fn scale(min: f32, max: f32, index: usize, count: usize) -> f32 {
    if count == 1 {
        (min + max) * 0.5
    } else {
        min + (max - min) * index as f32 / (count - 1) as f32
    }
}

/// Generates the anchors in the order the detector's outputs use.
pub fn generate(opts: &AnchorOptions) -> Vec<Anchor> {
    let n = opts.strides.len();
    let mut anchors = Vec::new();
    let mut layer = 0;
    while layer < n {
        let mut sizes: Vec<(f32, f32)> = Vec::new();
        let mut last = layer;
        while last < n && opts.strides[last] == opts.strides[layer] {
            let s = scale(opts.min_scale, opts.max_scale, last, n);
            for &ar in &opts.aspect_ratios {
                sizes.push((s, ar));
            }
            if opts.interpolated_scale_aspect_ratio > 0.0 {
                let next = if last == n - 1 {
                    1.0
                } else {
                    scale(opts.min_scale, opts.max_scale, last + 1, n)
                };
                sizes.push(((s * next).sqrt(), opts.interpolated_scale_aspect_ratio));
            }
            last += 1;
        }
        let stride = opts.strides[layer];
        let fh = opts.input_height.div_ceil(stride);
        let fw = opts.input_width.div_ceil(stride);
        for y in 0..fh {
            for x in 0..fw {
                for &(s, ar) in &sizes {
                    let (w, h) = if opts.fixed_anchor_size {
                        (1.0, 1.0)
                    } else {
                        (s * ar.sqrt(), s / ar.sqrt())
                    };
                    anchors.push(Anchor {
                        x_center: (x as f32 + opts.anchor_offset) / fw as f32,
                        y_center: (y as f32 + opts.anchor_offset) / fh as f32,
                        w,
                        h,
                    });
                }
            }
        }
        layer = last;
    }
    anchors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchor_counts_match_the_models() {
        assert_eq!(generate(&AnchorOptions::face_short_range()).len(), 896);
        assert_eq!(generate(&AnchorOptions::face_full_range()).len(), 2304);
        assert_eq!(generate(&AnchorOptions::pose()).len(), 2254);
    }

    #[test]
    fn first_anchors_sit_in_the_first_cell() {
        let a = generate(&AnchorOptions::face_short_range());
        // Stride 8 on 128: 16×16 cells, two anchors per cell.
        assert_eq!(a[0].x_center, 0.5 / 16.0);
        assert_eq!(a[1].x_center, 0.5 / 16.0);
        assert_eq!(a[2].x_center, 1.5 / 16.0);
        // The stride-16 layers start after 512 anchors: 8×8 cells, six per cell.
        assert_eq!(a[512].x_center, 0.5 / 8.0);
        assert_eq!(a[518].x_center, 1.5 / 8.0);
        assert!(a.iter().all(|a| a.w == 1.0 && a.h == 1.0));
    }
}
