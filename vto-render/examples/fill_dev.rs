//! DEV ONLY (not committed): fills every case in a dir, writes <case>-<tag>.png into OUT,
//! prints "<case> <best wall ms> <cpu ms per fill>".
use std::path::Path;
use std::time::Instant;

fn cpu_ns() -> u64 {
    let mut total = 0;
    for e in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        if let Ok(s) = std::fs::read_to_string(e.path().join("schedstat")) {
            total += s.split_whitespace().next().unwrap().parse::<u64>().unwrap();
        }
    }
    total
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (dir, out, reps) = (Path::new(&a[1]), Path::new(&a[2]), a.get(3).map_or(1, |r| r.parse().unwrap()));
    std::fs::create_dir_all(out).unwrap();
    let mut cases: Vec<String> = std::fs::read_dir(dir).unwrap().flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.strip_suffix("-mask.png")).map(str::to_string))
        .collect();
    cases.sort();
    let opts = vto_render::fill::FillOptions::default();
    let (mut tw, mut tc) = (0.0, 0.0);
    let mut first = true;
    for case in &cases {
        let stem = case.split('-').next().unwrap();
        let photo = image::open(dir.join(format!("{stem}.png"))).unwrap().to_rgb8();
        let mask = image::open(dir.join(format!("{case}-mask.png"))).unwrap().to_luma8();
        if first { vto_render::fill::fill_with(&photo, &mask, None, &opts).unwrap(); first = false; }
        let mut best = f64::MAX;
        let c0 = cpu_ns();
        let mut res = None;
        for _ in 0..reps {
            let t0 = Instant::now();
            res = Some(vto_render::fill::fill_with(&photo, &mask, None, &opts).unwrap());
            best = best.min(t0.elapsed().as_secs_f64() * 1e3);
        }
        let cpu = (cpu_ns() - c0) as f64 / 1e6 / reps as f64;
        res.unwrap().save(out.join(format!("{case}-ours.png"))).unwrap();
        println!("{case} {best:.1} {cpu:.1}");
        tw += best; tc += cpu;
    }
    println!("MEAN {:.1} {:.1}", tw / cases.len() as f64, tc / cases.len() as f64);
}
