package jobmgr

// Reads is the engine's read side: jobs, tasks, updates, pools, hosts,
// clusters, migrations, events and the event stream. A read changes
// nothing and never waits for a pass's write: jobs and updates come from
// the view published after each write (view.go), ended tasks and history
// from the store, the rest from the engine's state under its lock, held
// only to copy.
type Reads struct{ e *Engine }

// Reads returns the engine's read side.
func (e *Engine) Reads() Reads { return Reads{e} }
