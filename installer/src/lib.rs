//! Installer (filled in by the installer issue).
