package periodic

import (
	"strings"
	"testing"

	"github.com/peloton-federated/peloton/shard/model"
)

func TestParseScheduleNamesWhatIsWrong(t *testing.T) {
	if _, loc, err := Parse(&model.Schedule{Cron: "0 3 * * *"}); err != nil || loc.String() != "UTC" {
		t.Fatalf("no zone: %v %v, want UTC", loc, err)
	}
	if _, loc, err := Parse(&model.Schedule{Cron: "0 3 * * *", TimeZone: "Europe/Berlin"}); err != nil || loc.String() != "Europe/Berlin" {
		t.Fatalf("Europe/Berlin: %v %v", loc, err)
	}
	if _, _, err := Parse(&model.Schedule{Cron: "0 25 * * *"}); err == nil {
		t.Fatal("hour 25 accepted")
	}
	if _, _, err := Parse(&model.Schedule{Cron: "0 3 * * *", TimeZone: "Mars/Olympus"}); err == nil || !strings.Contains(err.Error(), `"Mars/Olympus"`) {
		t.Fatalf("unknown zone: %v", err)
	}
}

func TestSchedulesParseOnce(t *testing.T) {
	var s Schedules
	a, la, err := s.Parse(&model.Schedule{Cron: "*/5 * * * *", TimeZone: "Asia/Tokyo"})
	if err != nil {
		t.Fatal(err)
	}
	b, lb, _ := s.Parse(&model.Schedule{Cron: "*/5 * * * *", TimeZone: "Asia/Tokyo"})
	if a != b || la != lb {
		t.Fatal("the same schedule was parsed twice")
	}
	if _, _, err := s.Parse(&model.Schedule{Cron: "bad"}); err == nil {
		t.Fatal("a bad expression was accepted")
	}
}
