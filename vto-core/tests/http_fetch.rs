//! `HttpFetcher` and `media` against a real (hand-written, misbehaving) HTTP server on
//! loopback: the SSRF guard, redirects, byte caps, timeouts, and the bad inputs of issue 4.

use std::net::IpAddr;
use std::time::Duration;

use image::{DynamicImage, Rgb, RgbImage};
use reqwest::dns::Resolve;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use vto_core::http_fetch::{is_forbidden, FetchConfig, HttpFetcher};
use vto_core::media::{self, ImageLimits};
use vto_core::{ErrorCode, FetchError, FetchLimits, Fetcher, InputRef};

fn png(w: u32, h: u32) -> Vec<u8> {
    let img = RgbImage::from_fn(w, h, |x, y| Rgb([x as u8, y as u8, 99]));
    media::encode_png(&DynamicImage::ImageRgb8(img)).unwrap()
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut c = (data.len() as u32).to_be_bytes().to_vec();
    c.extend(kind);
    c.extend(data);
    let mut crc_input = kind.to_vec();
    crc_input.extend(data);
    c.extend(crc32(&crc_input).to_be_bytes());
    c
}

/// A well-formed PNG whose header claims 100 000 × 100 000 RGB pixels (30 GB decoded).
fn png_bomb() -> Vec<u8> {
    let mut ihdr = 100_000u32.to_be_bytes().to_vec();
    ihdr.extend(100_000u32.to_be_bytes());
    ihdr.extend([8, 2, 0, 0, 0]);
    let mut v = b"\x89PNG\r\n\x1a\n".to_vec();
    v.extend(chunk(b"IHDR", &ihdr));
    // A zlib stream of zeros (the start of the first row): valid, tiny, and far too short.
    v.extend(chunk(
        b"IDAT",
        &[0x78, 0x9c, 0x63, 0x60, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01],
    ));
    v.extend(chunk(b"IEND", &[]));
    v
}

/// A loopback HTTP/1.1 server that answers by path, including ways no real server should.
async fn serve() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&head).to_string();
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                let full = |status: &str, ct: &str, body: &[u8], extra: &str| {
                    let mut r = format!(
                        "HTTP/1.1 {status}\r\ncontent-type: {ct}\r\ncontent-length: {}\r\nconnection: close\r\n{extra}\r\n",
                        body.len()
                    )
                    .into_bytes();
                    r.extend_from_slice(body);
                    r
                };
                let redirect = |to: &str| {
                    full(
                        "302 Found",
                        "text/plain",
                        b"",
                        &format!("location: {to}\r\n"),
                    )
                };
                let reply = match path.as_str() {
                    "/ok.png" => full("200 OK", "image/png", &png(8, 6), ""),
                    "/html" => full("200 OK", "image/png", b"<!DOCTYPE html><html><body>Please log in</body></html>", ""),
                    "/truncated.png" => {
                        let p = png(64, 64);
                        full("200 OK", "image/png", &p[..p.len() / 2], "")
                    }
                    "/bomb.png" => full("200 OK", "image/png", &png_bomb(), ""),
                    "/missing" => full("404 Not Found", "text/plain", b"nope", ""),
                    "/to-ok" => redirect("/ok.png"),
                    "/to-metadata" => redirect("http://169.254.169.254/latest/meta-data/"),
                    "/to-ftp" => redirect("ftp://example.com/a.png"),
                    "/loop" => redirect("/loop"),
                    "/declared-huge" => {
                        b"HTTP/1.1 200 OK\r\ncontent-type: image/png\r\ncontent-length: 900000000\r\n\r\nabc".to_vec()
                    }
                    "/slow" => {
                        tokio::time::sleep(Duration::from_secs(10)).await;
                        full("200 OK", "image/png", &png(2, 2), "")
                    }
                    "/endless" => {
                        let _ = sock
                            .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: image/png\r\nconnection: close\r\n\r\n")
                            .await;
                        let block = vec![0x42u8; 64 * 1024];
                        while sock.write_all(&block).await.is_ok() {}
                        return;
                    }
                    _ => full("404 Not Found", "text/plain", b"", ""),
                };
                let _ = sock.write_all(&reply).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    port
}

fn url(u: &str) -> InputRef {
    InputRef::Url { url: u.to_string() }
}

fn loopback_allowed() -> HttpFetcher {
    HttpFetcher::new(FetchConfig {
        allow: vec!["127.0.0.1/32".into()],
        ..FetchConfig::default()
    })
    .unwrap()
}

fn guarded() -> HttpFetcher {
    HttpFetcher::new(FetchConfig::default()).unwrap()
}

fn limits() -> FetchLimits {
    FetchLimits {
        max_bytes: 1 << 20,
        connect_timeout_ms: 1_000,
        total_timeout_ms: 3_000,
        max_redirects: 3,
    }
}

async fn refused(f: &HttpFetcher, u: &str) -> String {
    match f.fetch(&url(u), &limits()).await {
        Err(e @ FetchError::Failed(_)) => {
            assert_eq!(e.code(), ErrorCode::InputFetchFailed);
            e.to_string()
        }
        other => panic!("{u} was not refused: {other:?}"),
    }
}

#[test]
fn every_forbidden_address_class_is_refused_and_public_addresses_are_not() {
    let forbidden = [
        ("127.0.0.1", "loopback"),
        ("127.255.0.9", "loopback"),
        ("10.1.2.3", "RFC 1918"),
        ("172.16.0.1", "RFC 1918"),
        ("172.31.255.254", "RFC 1918"),
        ("192.168.1.1", "RFC 1918"),
        ("169.254.169.254", "link-local (metadata)"),
        ("169.254.0.1", "link-local"),
        ("100.64.0.1", "CGNAT"),
        ("100.127.255.254", "CGNAT"),
        ("224.0.0.1", "multicast"),
        ("239.255.255.250", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("0.1.2.3", "this network"),
        ("255.255.255.255", "broadcast"),
        ("240.0.0.1", "reserved"),
        ("::1", "IPv6 loopback"),
        ("::", "IPv6 unspecified"),
        ("fc00::1", "unique local"),
        ("fd12:3456::1", "unique local"),
        ("fe80::1", "IPv6 link-local"),
        ("febf::1", "IPv6 link-local"),
        ("ff02::1", "IPv6 multicast"),
        ("::ffff:127.0.0.1", "mapped loopback"),
        ("::ffff:10.0.0.1", "mapped RFC 1918"),
        ("::ffff:169.254.169.254", "mapped metadata"),
        ("::ffff:100.64.0.1", "mapped CGNAT"),
        ("::ffff:192.168.0.1", "mapped private"),
        ("::ffff:224.0.0.1", "mapped multicast"),
        ("::ffff:0.0.0.0", "mapped unspecified"),
        ("::127.0.0.1", "compatible loopback"),
        ("::8.8.8.8", "IPv4-compatible (deprecated)"),
        ("64:ff9b::a9fe:a9fe", "NAT64 metadata"),
        ("2002:7f00:1::", "6to4 loopback"),
        ("2002:a00:1::1", "6to4 private"),
    ];
    for (ip, class) in forbidden {
        let addr: IpAddr = ip.parse().unwrap();
        assert!(is_forbidden(addr), "{ip} ({class}) must be refused");
    }
    let public = [
        "8.8.8.8",
        "1.1.1.1",
        "93.184.216.34",
        "172.32.0.1",
        "100.128.0.1",
        "169.255.0.1",
        "2606:4700:4700::1111",
        "2a00:1450:4001:80b::200e",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
    ];
    for ip in public {
        assert!(!is_forbidden(ip.parse().unwrap()), "{ip} is public");
    }
}

#[tokio::test]
async fn literal_addresses_of_every_class_are_refused_before_connecting() {
    let f = guarded();
    for u in [
        "http://127.0.0.1/",
        "http://10.0.0.1/a.png",
        "http://172.16.5.4/",
        "http://192.168.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://100.64.0.1/",
        "http://224.0.0.1/",
        "http://0.0.0.0/",
        "http://255.255.255.255/",
        "http://[::1]/",
        "http://[::]/",
        "http://[fd00::1]/",
        "http://[fe80::1]/",
        "http://[ff02::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:a9fe:a9fe]/",
        "http://2130706433/",
        "https://0x7f000001/",
    ] {
        let msg = refused(&f, u).await;
        assert!(msg.contains("does not connect to"), "{u}: {msg}");
    }
}

#[tokio::test]
async fn a_hostname_resolving_to_loopback_is_refused() {
    let port = serve().await;
    let f = guarded();
    let msg = refused(&f, &format!("http://localhost:{port}/ok.png")).await;
    assert!(msg.contains("localhost resolves to a loopback"), "{msg}");

    // The resolver itself, as any client using the policy would call it.
    let resolver = f.policy().resolver();
    let err = resolver
        .resolve("localhost".parse().unwrap())
        .await
        .err()
        .expect("localhost must not resolve through the guard");
    assert!(err.to_string().contains("loopback"), "{err}");
}

#[tokio::test]
async fn the_allow_list_opens_loopback_for_tests() {
    let port = serve().await;
    let got = loopback_allowed()
        .fetch(&url(&format!("http://127.0.0.1:{port}/ok.png")), &limits())
        .await
        .unwrap();
    assert_eq!(got.bytes, png(8, 6));
    assert_eq!(got.declared_type.as_deref(), Some("image/png"));
    // The allow-list names 127.0.0.1 only: refused on the guarded fetcher.
    let msg = refused(&guarded(), &format!("http://127.0.0.1:{port}/ok.png")).await;
    assert!(msg.contains("loopback"), "{msg}");
}

#[tokio::test]
async fn redirects_are_followed_and_each_hop_is_rechecked() {
    let port = serve().await;
    let f = loopback_allowed();
    let base = format!("http://127.0.0.1:{port}");
    let got = f
        .fetch(&url(&format!("{base}/to-ok")), &limits())
        .await
        .unwrap();
    assert_eq!(got.bytes, png(8, 6));

    let msg = refused(&f, &format!("{base}/to-metadata")).await;
    assert!(
        msg.contains("169.254.169.254") && msg.contains("link-local"),
        "{msg}"
    );
    let msg = refused(&f, &format!("{base}/to-ftp")).await;
    assert!(msg.contains("only http and https"), "{msg}");
    let msg = refused(&f, &format!("{base}/loop")).await;
    assert!(msg.contains("more than 3 redirects"), "{msg}");
    let no_redirects = FetchLimits {
        max_redirects: 0,
        ..limits()
    };
    let e = f
        .fetch(&url(&format!("{base}/to-ok")), &no_redirects)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("more than 0 redirects"), "{e}");
}

#[tokio::test]
async fn an_endless_stream_stops_at_the_byte_cap() {
    let port = serve().await;
    let e = loopback_allowed()
        .fetch(&url(&format!("http://127.0.0.1:{port}/endless")), &limits())
        .await
        .unwrap_err();
    assert_eq!(e, FetchError::TooLarge { limit: 1 << 20 });
    assert_eq!(e.code(), ErrorCode::InputTooLarge);
}

#[tokio::test]
async fn a_declared_oversized_body_is_refused_without_reading_it() {
    let port = serve().await;
    let e = loopback_allowed()
        .fetch(
            &url(&format!("http://127.0.0.1:{port}/declared-huge")),
            &limits(),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InputTooLarge);
}

#[tokio::test]
async fn http_errors_and_slow_servers_fail_clearly() {
    let port = serve().await;
    let f = loopback_allowed();
    let msg = refused(&f, &format!("http://127.0.0.1:{port}/missing")).await;
    assert!(msg.contains("HTTP 404"), "{msg}");
    let quick = FetchLimits {
        total_timeout_ms: 300,
        ..limits()
    };
    let e = f
        .fetch(&url(&format!("http://127.0.0.1:{port}/slow")), &quick)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("within 300 ms"), "{e}");
    // Nothing listens on a just-freed port.
    let closed = {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        l.local_addr().unwrap().port()
    };
    let msg = refused(&f, &format!("http://127.0.0.1:{closed}/x.png")).await;
    assert!(msg.contains("could not connect"), "{msg}");
}

#[tokio::test]
async fn data_urls_are_served_without_the_network() {
    let f = guarded();
    let got = f
        .fetch(
            &InputRef::Data {
                media_type: "image/png".into(),
                bytes: png(3, 3),
            },
            &limits(),
        )
        .await
        .unwrap();
    assert_eq!(got.bytes, png(3, 3));
}

/// Fetches a served body and decodes it as an image, as an engine does.
async fn fetch_and_decode(path: &str) -> Result<DynamicImage, (ErrorCode, String)> {
    let port = serve().await;
    let fetched = loopback_allowed()
        .fetch(&url(&format!("http://127.0.0.1:{port}{path}")), &limits())
        .await
        .map_err(|e| (e.code(), e.to_string()))?;
    media::decode_image(&fetched.bytes, &ImageLimits::default())
        .map_err(|e| (e.code(), e.to_string()))
}

#[tokio::test]
async fn html_served_as_an_image_is_unsupported_media() {
    let (code, msg) = fetch_and_decode("/html").await.unwrap_err();
    assert_eq!(code, ErrorCode::UnsupportedMedia);
    assert!(msg.contains("HTML"), "{msg}");
}

#[tokio::test]
async fn a_truncated_png_is_unsupported_media() {
    let (code, msg) = fetch_and_decode("/truncated.png").await.unwrap_err();
    assert_eq!(code, ErrorCode::UnsupportedMedia);
    assert!(msg.contains("truncated or corrupt"), "{msg}");
}

#[tokio::test]
async fn a_png_header_claiming_100000_squared_pixels_is_input_too_large() {
    let (code, msg) = fetch_and_decode("/bomb.png").await.unwrap_err();
    assert_eq!(code, ErrorCode::InputTooLarge, "{msg}");
    assert!(msg.contains("100000×100000"), "{msg}");
    // And the same bytes through the header probe alone.
    let e = media::probe_image(&png_bomb(), &ImageLimits::default()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InputTooLarge);
}

#[tokio::test]
async fn a_good_png_round_trips() {
    let img = fetch_and_decode("/ok.png").await.unwrap();
    assert_eq!((img.width(), img.height()), (8, 6));
}
