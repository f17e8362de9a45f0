package policy

import "errors"

// Sentinel errors. Functions wrap them with %w and the names involved.
var (
	// ErrUnknownRegion: a job is pinned to a region the federation does
	// not know.
	ErrUnknownRegion = errors.New("unknown region")
	// ErrRegionFailed: a job is pinned to a region that is failed or fenced.
	ErrRegionFailed = errors.New("region failed")
	// ErrRegionNotAllowed: a job is pinned to a region outside its allowed
	// list.
	ErrRegionNotAllowed = errors.New("region not allowed")
	// ErrNoRegion: no region can take the job; the error says why each was
	// excluded.
	ErrNoRegion = errors.New("no region can take the job")
	// ErrBadHealthConfig: health thresholds that are not positive or not in
	// order.
	ErrBadHealthConfig = errors.New("bad health config")
)
