//! Unit tests of the part warps (`super` is `garment::warp`).
use super::*;

/// A spline through the control points reproduces them (up to the smoothing), and a
/// pure similarity is reproduced everywhere.
#[test]
fn spline_interpolates_and_keeps_affine_maps() {
    let body = vec![
        Vec2::new(100.0, 100.0),
        Vec2::new(300.0, 110.0),
        Vec2::new(310.0, 400.0),
        Vec2::new(90.0, 390.0),
        Vec2::new(200.0, 250.0),
    ];
    let affine = |p: Vec2| Vec2::new(0.5 * p.x + 0.1 * p.y + 7.0, -0.1 * p.x + 0.5 * p.y + 3.0);
    let part = Part {
        label: 1,
        garment: body.iter().map(|p| affine(*p)).collect(),
        body: body.clone(),
        region: [0.0, 0.0, 500.0, 500.0],
        tube: None,
    };
    let w = PartWarp::solve(&part, 512.0).unwrap();
    for p in [
        Vec2::new(0.0, 0.0),
        Vec2::new(250.0, 333.0),
        Vec2::new(480.0, 20.0),
    ] {
        assert!(w.eval(p).distance(affine(p)) < 0.05, "{p}: {}", w.eval(p));
    }
    let mut bent = part.clone();
    bent.garment[4] += Vec2::new(20.0, -10.0);
    let w = PartWarp::solve(&bent, 512.0).unwrap();
    for (b, g) in bent.body.iter().zip(&bent.garment) {
        assert!(
            w.eval(*b).distance(*g) < 0.5,
            "{b} → {} not {g}",
            w.eval(*b)
        );
    }
}

/// The grid's bilinear interpolation stays within a quarter pixel of the exact spline
/// for a bent part the size of a torso.
#[test]
fn the_grid_interpolates_the_spline_closely() {
    let body = vec![
        Vec2::new(300.0, 100.0),
        Vec2::new(600.0, 120.0),
        Vec2::new(620.0, 600.0),
        Vec2::new(280.0, 590.0),
        Vec2::new(450.0, 350.0),
        Vec2::new(330.0, 300.0),
    ];
    let mut garment: Vec<Vec2> = body.iter().map(|p| *p * 0.8).collect();
    garment[4] += Vec2::new(30.0, -25.0);
    garment[5] += Vec2::new(-20.0, 15.0);
    let part = Part {
        label: 1,
        garment,
        region: Part::region_around(&body, 40.0),
        body,
        tube: None,
    };
    let w = PartWarp::solve(&part, 1024.0).unwrap();
    let grid = WarpGrid::new(std::slice::from_ref(&w), (1024, 768));
    assert_eq!(grid.origin, (240, 60));
    let nodes = grid.evaluate(std::slice::from_ref(&w));
    let o = Vec2::new(grid.origin.0 as f32, grid.origin.1 as f32);
    let mut worst = 0.0f32;
    for y in (0..grid.size.1).step_by(3) {
        for x in (0..grid.size.0).step_by(3) {
            let local = Vec2::new(x as f32, y as f32);
            worst = worst.max(grid.lookup(&nodes, local).distance(w.eval(local + o)));
        }
    }
    assert!(worst < 0.25, "the grid is {worst} px off the spline");
}

/// Coincident control points are a typed error, not a panic or NaNs.
#[test]
fn degenerate_points_are_an_error() {
    let p = Vec2::new(5.0, 5.0);
    let part = Part {
        label: 1,
        garment: vec![p; 4],
        body: vec![p; 4],
        region: [0.0; 4],
        tube: None,
    };
    assert!(PartWarp::solve(&part, 100.0).is_err());
}
