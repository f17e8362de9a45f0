package cli

import (
	"strings"
	"testing"
)

func TestUsageArgs(t *testing.T) {
	for use, want := range map[string]string{
		"get JOB_ID": "JOB_ID",
		"drain HOST_ID [--reason R] [--deadline D]":                        "HOST_ID",
		"stop JOB_ID [INSTANCE...]":                                        "JOB_ID INSTANCE",
		"create -f FILE":                                                   "",
		"can-i ACTION [--pool P | --job ID]":                               "ACTION",
		"set NAME [--addr A] [--ca F] [--cert F --key F] [--token-file F]": "NAME",
		"update JOB_ID -f FILE":                                            "JOB_ID",
		"list":                                                             "",
		"set HOST_ID HOST_POOL":                                            "HOST_ID HOST_POOL",
	} {
		if got := strings.Join(usageArgs(use), " "); got != want {
			t.Errorf("usageArgs(%q) = %q, want %q", use, got, want)
		}
	}
}

// Every command that takes a job, update, host or pool completes it.
func TestCommandsCompleteTheirArguments(t *testing.T) {
	root := newRootCommand(&app{})
	for _, path := range []string{"job get", "job stop", "job update", "job config", "job events", "task list", "task logs",
		"update get", "update pause", "update list", "host drain", "host down", "host up", "host pool set", "pool get", "pool delete",
		"region plan", "region failback"} {
		cmd, _, err := root.Find(strings.Fields(path))
		if err != nil || cmd.ValidArgsFunction == nil {
			t.Errorf("%s: no argument completion (%v)", path, err)
		}
	}
	for _, path := range []string{"job create", "job list", "pool list"} {
		if cmd, _, _ := root.Find(strings.Fields(path)); cmd.ValidArgsFunction != nil {
			t.Errorf("%s completes arguments it does not take", path)
		}
	}
	list, _, _ := root.Find([]string{"job", "list"})
	if _, ok := list.GetFlagCompletionFunc("pool"); !ok {
		t.Error("job list --pool does not complete")
	}
}
