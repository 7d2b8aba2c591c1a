//! Embedding vto-core in-process: memory backends, one account, one key, a sync and an async
//! try-on, printed as the API's result objects.
//!
//! Run: `cargo run -p vto-examples --example embedded`
//!
//! The engine here is an EXAMPLE ENGINE, not a try-on renderer: it lays the product image over
//! the middle of the person photo with a soft edge, so the example runs without models or a GPU.
//! vto's real renderers live in `vto-render` and plug into the same `Engine` trait.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use vto_core::{
    Backends, Category, CreateRequest, Engine, EngineError, Engines, RenderInput, Rendered,
    ServiceConfig, TryOnService,
};
use vto_examples::{data_url, png};

/// EXAMPLE ENGINE: blends the product picture into the centre of the person photo.
struct ExampleOverlayEngine;

#[async_trait]
impl Engine for ExampleOverlayEngine {
    fn name(&self) -> &str {
        "example-overlay (not a try-on renderer)"
    }

    async fn render(&self, input: RenderInput<'_>) -> Result<Rendered, EngineError> {
        let person = image::load_from_memory(&input.person.bytes)
            .map_err(|e| EngineError::processing(format!("person_image is not an image: {e}")))?
            .to_rgba8();
        // 3D models are not images: show a neutral swatch for them in this example.
        let product = image::load_from_memory(&input.product.bytes)
            .map(|p| p.to_rgba8())
            .unwrap_or_else(|_| image::RgbaImage::from_pixel(8, 8, image::Rgba([90, 90, 90, 255])));
        let (w, h) = person.dimensions();
        let (pw, ph) = (w / 2, h / 2);
        let product =
            image::imageops::resize(&product, pw, ph, image::imageops::FilterType::Triangle);
        let mut out = person.clone();
        for (x, y, p) in product.enumerate_pixels() {
            // Feathered edge: weight falls off over the outer 15 % of the patch.
            let fx = (x as f32 / pw as f32 - 0.5).abs() * 2.0;
            let fy = (y as f32 / ph as f32 - 0.5).abs() * 2.0;
            let wgt = ((1.0 - fx.max(fy)) / 0.15).clamp(0.0, 1.0) * p[3] as f32 / 255.0;
            let dst = out.get_pixel_mut(x + w / 4, y + h / 4);
            for c in 0..3 {
                dst[c] = (dst[c] as f32 * (1.0 - wgt) + p[c] as f32 * wgt).round() as u8;
            }
        }
        Ok(Rendered {
            image: png(&out),
            content_type: "image/png".into(),
            metadata: serde_json::json!({"engine": "example-overlay"}),
        })
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mem = Backends::in_memory();
    let mut engines = Engines::new();
    for c in Category::ALL {
        engines.register(c, Arc::new(ExampleOverlayEngine));
    }
    let svc = TryOnService::new(mem.backends.clone(), engines, ServiceConfig::default());

    let account = svc.create_account("Example Shop").await?;
    svc.add_funds(&account.id, "10.00".parse()?, "example top-up")
        .await?;
    let key = svc.create_api_key(&account.id, "example").await?;
    let caller = svc.authenticate(Some(&key.secret)).await?;

    let person = png(&image::RgbaImage::from_fn(64, 96, |x, y| {
        image::Rgba([(x * 4) as u8, (y * 2) as u8, 160, 255])
    }));
    let shirt = png(&image::RgbaImage::from_pixel(
        32,
        32,
        image::Rgba([200, 30, 40, 255]),
    ));
    let model = b"glTF\x02\x00\x00\x00".to_vec();

    let sync: CreateRequest = serde_json::from_value(serde_json::json!({
        "category": "glasses",
        "person_image": data_url("image/png", &person),
        "product_model": data_url("model/gltf-binary", &model),
    }))?;
    let created = svc
        .create(&caller, &sync)
        .await
        .map_err(|e| e.to_string())?;
    println!(
        "sync glasses result:\n{}",
        serde_json::to_string_pretty(created.result())?
    );

    let asynchronous: CreateRequest = serde_json::from_value(serde_json::json!({
        "category": "shirt",
        "person_image": data_url("image/png", &person),
        "product_image": data_url("image/png", &shirt),
        "webhook_url": "https://shop.example/hooks/vto",
    }))?;
    let accepted = svc
        .create(&caller, &asynchronous)
        .await
        .map_err(|e| e.to_string())?;
    let id = accepted.result().request_id.to_string();
    println!(
        "async shirt accepted:\n{}",
        serde_json::to_string_pretty(accepted.result())?
    );

    // One in-process worker, as the server runs them; stop once the job is done.
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let workers = tokio::spawn({
        let svc = svc.clone();
        async move { svc.run_workers(1, Duration::from_millis(10), stopped).await }
    });
    let done = loop {
        let r = svc.get(&caller, &id).await.map_err(|e| e.to_string())?;
        if r.status.is_terminal() {
            break r;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    stop.send(true)?;
    workers.await?;
    println!(
        "async shirt after the worker ran:\n{}",
        serde_json::to_string_pretty(&done)?
    );
    println!(
        "webhooks handed to the sender: {}",
        mem.webhooks.sent().len()
    );
    println!(
        "balance: {}",
        serde_json::to_string(&svc.balance(&caller).await.map_err(|e| e.to_string())?)?
    );
    Ok(())
}
