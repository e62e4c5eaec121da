//! The page's files, embedded in the binary: one HTML page with three views (gallery,
//! playground, animation), its stylesheet and its script. The script is the project's own
//! and draws every plot itself as SVG elements (no third-party library).

/// `(content type, text)` of the asset `name`.
pub fn get(name: &str) -> Option<(&'static str, &'static str)> {
    match name {
        "index.html" => Some(("text/html; charset=utf-8", include_str!("../assets/index.html"))),
        "app.js" => Some(("text/javascript; charset=utf-8", include_str!("../assets/app.js"))),
        "app.css" => Some(("text/css; charset=utf-8", include_str!("../assets/app.css"))),
        _ => None,
    }
}
