// Fused activations of TFLite operators, shared by the tflite kernels.
// Codes (host: `Activation::gpu_code`): 0 none, 1 RELU, 2 RELU_N1_TO_1, 3 RELU6, 4 TANH.

fn activate(v: f32, act: u32) -> f32 {
    switch act {
        case 1u: { return max(v, 0.0); }
        case 2u: { return clamp(v, -1.0, 1.0); }
        case 3u: { return clamp(v, 0.0, 6.0); }
        case 4u: { return tanh(v); }
        default: { return v; }
    }
}

fn activate4(v: vec4<f32>, act: u32) -> vec4<f32> {
    switch act {
        case 1u: { return max(v, vec4<f32>(0.0)); }
        case 2u: { return clamp(v, vec4<f32>(-1.0), vec4<f32>(1.0)); }
        case 3u: { return clamp(v, vec4<f32>(0.0), vec4<f32>(6.0)); }
        case 4u: { return tanh(v); }
        default: { return v; }
    }
}

// Convolution epilogue activations: the fused ones above plus the activation operators that
// the executor folds into convolutions. 5 HARD_SWISH, 6 LOGISTIC, 7 PRELU with `alpha`.
fn activate_full(v: vec4<f32>, act: u32, alpha: vec4<f32>) -> vec4<f32> {
    switch act {
        case 5u: { return v * clamp(v + vec4<f32>(3.0), vec4<f32>(0.0), vec4<f32>(6.0)) / 6.0; }
        case 6u: { return 1.0 / (1.0 + exp(-v)); }
        case 7u: { return select(v * alpha, v, v >= vec4<f32>(0.0)); }
        default: { return activate4(v, act); }
    }
}
