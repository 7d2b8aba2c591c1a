//! Runtime dispatch of the hand-written CPU loops (native kernels, host-side crops and mask
//! warps) to the widest instruction set the CPU has, without `unsafe` in this crate: `pulp`
//! detects AVX2/FMA (x86-64 v3) once and calls into a `#[target_feature]` function.

/// Declares a struct holding a kernel function's arguments whose `pulp::WithSimd` impl calls
/// the function directly: run through `pulp::Arch::dispatch` ([`simd`]), the function (an
/// `#[inline(always)]` fn) is inlined into pulp's `#[target_feature]` entry point and so
/// compiled for the widest instruction set the CPU has (AVX2 on x86-64 v3): its plain loops
/// vectorise 8 lanes wide. (A closure would not do: its body is a function of its own that
/// LLVM need not inline, compiled for the baseline.)
macro_rules! simd_kernel {
    ($wrapper:ident => $f:ident($args:ty)) => {
        struct $wrapper<'a>($args);

        impl pulp::WithSimd for $wrapper<'_> {
            type Output = ();

            #[inline(always)]
            fn with_simd<S: pulp::Simd>(self, _simd: S) {
                $f(self.0)
            }
        }
    };
}

/// Runs a kernel declared with [`simd_kernel`] on the widest instruction set available.
#[inline(always)]
pub(crate) fn simd(kernel: impl pulp::WithSimd<Output = ()>) {
    pulp::Arch::new().dispatch(kernel)
}

pub(crate) use simd_kernel;
