package lossy

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/peloton-federated/peloton/api/peloton/v1"
	"github.com/peloton-federated/peloton/tests/testkit"
)

// TestMain leaves the binary to the tests that run it: testkit.Binary
// builds it once, and Main removes it.
func TestMain(m *testing.M) { testkit.Main(m, nil) }

// cli runs `peloton args...` against viewer's API, as an operator would,
// with a home and environment of its own.
func (f *fed) cli(bin, viewer string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(f.t.Context(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(args, "--addr", f.regions[viewer].Addr)...)
	cmd.Env = []string{"HOME=" + f.t.TempDir(), "PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// probeLine matches the PROBES LOST cell of the region table: lost/sent
// (percent), maybe ", k failed".
var probeLine = regexp.MustCompile(`(\d+)/(\d+) \((\d+)%\)(, (\d+) failed)?\s*$`)

// listedLossy runs `peloton region list` against viewer, in JSON and as
// a table, and says whether both show viewer's probes of lossy's members
// mostly lost (at least 3, and half of those sent) while those of clean's
// members mostly arrive; it returns what it saw.
func (f *fed) listedLossy(bin, viewer, lossy, clean string) (string, bool) {
	out, err := f.cli(bin, viewer, "region", "list", "-o", "json")
	if err != nil {
		return "region list -o json: " + err.Error() + ": " + out, false
	}
	var resp pb.ListRegionsResponse
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal([]byte(out), &resp); err != nil {
		f.t.Fatalf("region list -o json is not a ListRegionsResponse: %v\n%s", err, out)
	}
	sums := map[string]*pb.ProbeCounts{}
	for _, r := range resp.GetRegions() {
		s := &pb.ProbeCounts{}
		for _, m := range r.GetMembers() {
			p := m.GetProbes()
			if p == nil {
				continue
			}
			if p.GetWindow().AsDuration() != time.Minute {
				f.t.Fatalf("probe window %v, want a minute:\n%s", p.GetWindow().AsDuration(), out)
			}
			s.Sent, s.Lost, s.Failed = s.Sent+p.GetSent(), s.Lost+p.GetLost(), s.Failed+p.GetFailed()
		}
		sums[r.GetName()] = s
	}
	bad, good := sums[lossy], sums[clean]
	if bad == nil || good == nil || bad.GetLost() < 3 || 2*bad.GetLost() < bad.GetSent() || good.GetSent() == 0 || 2*good.GetLost() >= good.GetSent() {
		return out, false
	}
	table, err := f.cli(bin, viewer, "region", "list")
	if err != nil {
		return "region list: " + err.Error() + ": " + table, false
	}
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if !strings.HasSuffix(lines[0], "PROBES LOST (1m)") {
		f.t.Fatalf("region table without its probe column:\n%s", table)
	}
	for _, line := range lines[1:] {
		fields := strings.Fields(line)
		m := probeLine.FindStringSubmatch(line)
		if len(fields) == 0 || m == nil {
			continue
		}
		lost, _ := strconv.Atoi(m[1])
		pct, _ := strconv.Atoi(m[3])
		switch fields[0] {
		case lossy:
			if lost < 3 || pct < 50 {
				return table, false
			}
		case clean:
			if pct >= 50 {
				return table, false
			}
		}
	}
	return table, true
}
