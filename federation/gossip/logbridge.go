package gossip

import (
	"bytes"
	"context"
	"log"
	"log/slog"
	"strings"
)

// newSerfLogger turns serf's and memberlist's "[LEVEL] text" lines into
// slog records at the matching level, and shows each line to observe
// first (the probe counts). A nil logger discards them.
func newSerfLogger(logger *slog.Logger, observe func(text string)) *log.Logger {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return log.New(&levelWriter{logger: logger.With("component", "serf"), observe: observe}, "", 0)
}

type levelWriter struct {
	logger  *slog.Logger
	observe func(text string)
}

func (w *levelWriter) Write(p []byte) (int, error) {
	line := string(bytes.TrimRight(p, "\r\n"))
	level, text := splitLevel(line)
	if w.observe != nil {
		w.observe(text)
	}
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
