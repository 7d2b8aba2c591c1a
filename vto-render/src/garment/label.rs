//! Part labels in the garment's label map (0 is background).

/// The torso (body, collar, hem).
pub const TORSO: u8 = 1;
/// The sleeve on the image's left.
pub const SLEEVE_LEFT: u8 = 2;
/// The sleeve on the image's right.
pub const SLEEVE_RIGHT: u8 = 3;
/// A dress's skirt (waist to hem).
pub const SKIRT: u8 = 4;
/// Trousers' half on the image's left (waistband to hem).
pub const LEG_LEFT: u8 = 5;
/// Trousers' half on the image's right.
pub const LEG_RIGHT: u8 = 6;

/// Whether `l` is a part worn over the body's trunk (torso or skirt), which bare
/// forearms and hands lie in front of.
pub fn is_body(l: u8) -> bool {
    l == TORSO || l == SKIRT
}
