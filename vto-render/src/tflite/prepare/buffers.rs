//! Buffer planning for both executors: which pool buffer holds each non-constant tensor
//! (tensors whose lifetimes do not overlap share one; a RESHAPE is a view of its input).

use std::collections::HashMap;

use super::{Plan, Step};

/// Buffer planning: which pool buffer holds each non-constant tensor.
pub(crate) struct Allocation {
    /// Pool buffer index per tensor (reshape views share their source's).
    pub slot: HashMap<usize, usize>,
    /// Size in bytes of each pool buffer.
    pub sizes: Vec<u64>,
}

pub(crate) fn plan_buffers(plan: &Plan) -> Allocation {
    // Reshape outputs are views of their input.
    let mut root: HashMap<usize, usize> = HashMap::new();
    let find = |root: &HashMap<usize, usize>, mut t: usize| {
        while let Some(&r) = root.get(&t) {
            t = r;
        }
        t
    };
    for s in &plan.steps {
        if let Step::Reshape { x, y } = s {
            let r = find(&root, *x);
            root.insert(*y, r);
        }
    }
    // Last step reading each root; graph outputs and inputs live forever.
    let mut last_use: HashMap<usize, usize> = HashMap::new();
    for (i, s) in plan.steps.iter().enumerate() {
        for r in s.reads() {
            if !plan.consts.contains_key(&r) {
                last_use.insert(find(&root, r), i);
            }
        }
    }
    let pinned: Vec<usize> = plan
        .inputs
        .iter()
        .chain(&plan.outputs)
        .map(|&t| find(&root, t))
        .collect();
    for &p in &pinned {
        last_use.insert(p, usize::MAX);
    }
    let bytes = |t: usize| (plan.numel(t).max(1) * 4) as u64;
    let mut sizes: Vec<u64> = Vec::new();
    let mut free: Vec<usize> = Vec::new();
    let mut slot: HashMap<usize, usize> = HashMap::new();
    let take = |need: u64, sizes: &mut Vec<u64>, free: &mut Vec<usize>| -> usize {
        // Best fit among free buffers; grow the largest free one if none fits.
        let fit = free
            .iter()
            .enumerate()
            .filter(|(_, &b)| sizes[b] >= need)
            .min_by_key(|(_, &b)| sizes[b])
            .map(|(k, _)| k);
        if let Some(k) = fit {
            return free.swap_remove(k);
        }
        if let Some((k, _)) = free.iter().enumerate().max_by_key(|(_, &b)| sizes[b]) {
            let b = free.swap_remove(k);
            sizes[b] = need;
            return b;
        }
        sizes.push(need);
        sizes.len() - 1
    };
    for &t in &plan.inputs {
        let b = take(bytes(t), &mut sizes, &mut free);
        slot.insert(t, b);
    }
    for (i, s) in plan.steps.iter().enumerate() {
        let y = s.writes();
        if let Step::Reshape { x, .. } = s {
            let b = slot[&find(&root, *x)];
            slot.insert(y, b);
        } else {
            let b = take(bytes(y), &mut sizes, &mut free);
            slot.insert(y, b);
            // A tensor nobody reads (and not an output) is free right after being written.
            last_use.entry(y).or_insert(i);
        }
        // Release roots whose last reader is this step.
        let mut released: Vec<usize> = s
            .reads()
            .into_iter()
            .chain(std::iter::once(y))
            .filter(|r| !plan.consts.contains_key(r))
            .map(|r| find(&root, r))
            .filter(|r| last_use.get(r) == Some(&i))
            .collect();
        released.sort_unstable();
        released.dedup();
        for r in released {
            free.push(slot[&r]);
        }
    }
    Allocation { slot, sizes }
}
