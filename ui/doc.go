// Package ui serves the web UI: the TypeScript app in this directory (src/,
// built by `make ui` with Vite into dist/) embedded in the binary. The
// gateway mounts Handler at /ui/ on the API port. The app talks only to the
// public HTTP/JSON API; this package holds no API of its own and imports
// nothing of ours.
package ui
