//! LiteRT (`ai-edge-litert`, Google's TFLite runtime) as a reference [`Infer`] backend, through
//! `scripts/vision_reference.py serve` in a child process.
//!
//! For golden comparisons, tests and benchmarks only — never the product path, which runs the
//! models on vto's own wgpu executor. The Python comes from `VTO_LITERT_PYTHON` (default
//! `python3`) and needs `ai-edge-litert` and `numpy`.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use super::{Infer, Networks, VisionError};
use crate::models::{ModelId, ModelStore};

/// One model served by LiteRT in a child process.
#[derive(Debug)]
pub struct LiteRtProcess {
    model: ModelId,
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
}

/// The default location of the serving script (in this repository).
pub fn default_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/vision_reference.py")
}

impl LiteRtProcess {
    /// Starts `script serve <model file>` with `VTO_LITERT_PYTHON`.
    pub fn spawn(script: &Path, model_file: &Path, model: ModelId) -> Result<Self, VisionError> {
        let python = std::env::var("VTO_LITERT_PYTHON").unwrap_or_else(|_| "python3".into());
        let fail = |message: String| VisionError::Infer { model, message };
        let mut child = Command::new(&python)
            .arg(script)
            .arg("serve")
            .arg(model_file)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| fail(format!("starting {python} (set VTO_LITERT_PYTHON): {e}")))?;
        let stdin = child.stdin.take().ok_or_else(|| fail("no stdin".into()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| fail("no stdout".into()))?;
        Ok(Self {
            model,
            child,
            stdin,
            stdout,
        })
    }

    fn exchange(&mut self, inputs: &[&[f32]]) -> std::io::Result<Vec<Vec<f32>>> {
        let mut req = Vec::new();
        req.extend((inputs.len() as u32).to_le_bytes());
        for x in inputs {
            req.extend((x.len() as u32).to_le_bytes());
            req.extend_from_slice(bytemuck::cast_slice(x));
        }
        self.stdin.write_all(&req)?;
        self.stdin.flush()?;
        let mut word = [0u8; 4];
        self.stdout.read_exact(&mut word)?;
        let n = u32::from_le_bytes(word);
        let mut outs = Vec::new();
        for _ in 0..n {
            self.stdout.read_exact(&mut word)?;
            let len = u32::from_le_bytes(word) as usize;
            let mut buf = vec![0u8; len * 4];
            self.stdout.read_exact(&mut buf)?;
            outs.push(bytemuck::pod_collect_to_vec(&buf));
        }
        Ok(outs)
    }
}

impl Infer for LiteRtProcess {
    fn run(&mut self, inputs: &[&[f32]]) -> Result<Vec<Vec<f32>>, VisionError> {
        self.exchange(inputs).map_err(|e| VisionError::Infer {
            model: self.model,
            message: format!("LiteRT reference process: {e}"),
        })
    }
}

impl Drop for LiteRtProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The eight networks on LiteRT, from verified model files.
pub fn litert_networks(store: &ModelStore, script: &Path) -> Result<Networks, VisionError> {
    Networks::from_fn(|id| {
        Ok(Box::new(LiteRtProcess::spawn(
            script,
            &store.dir().join(id.file_name()),
            id,
        )?))
    })
}
