package gossip

import (
	"bytes"
	"context"
	"io"
	"log"
	"log/slog"
	"strings"
)

// newSerfLogger turns serf's and memberlist's "[LEVEL] text" lines into
// slog records at the matching level. A nil logger discards them.
func newSerfLogger(logger *slog.Logger) *log.Logger {
	if logger == nil {
		return log.New(io.Discard, "", 0)
	}
	return log.New(&levelWriter{logger: logger.With("component", "serf")}, "", 0)
}

type levelWriter struct {
	logger *slog.Logger
}

func (w *levelWriter) Write(p []byte) (int, error) {
	line := string(bytes.TrimRight(p, "\r\n"))
	level, text := splitLevel(line)
	w.logger.Log(context.Background(), level, text)
	return len(p), nil
}

// splitLevel reads the bracketed level prefix serf and memberlist use.
func splitLevel(line string) (slog.Level, string) {
	if !strings.HasPrefix(line, "[") {
		return slog.LevelInfo, line
	}
	end := strings.IndexByte(line, ']')
	if end < 0 {
		return slog.LevelInfo, line
	}
	text := strings.TrimSpace(line[end+1:])
	switch line[1:end] {
	case "TRACE", "DEBUG":
		return slog.LevelDebug, text
	case "WARN", "WARNING":
		return slog.LevelWarn, text
	case "ERR", "ERROR":
		return slog.LevelError, text
	default:
		return slog.LevelInfo, text
	}
}
