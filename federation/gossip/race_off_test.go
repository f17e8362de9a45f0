//go:build !race

package gossip

// raceDetector tells tests the race detector is on.
const raceDetector = false
