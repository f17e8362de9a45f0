package cassandra

import "testing"

func TestSharedPort(t *testing.T) {
	for _, c := range []struct {
		hosts []string
		port  int
		ok    bool
	}{
		{[]string{"127.0.0.2:19042", "127.0.0.3:19042", " 127.0.0.4:19042 "}, 19042, true},
		{[]string{"127.0.0.2:19042", "127.0.0.3:9042"}, 0, false},
		{[]string{"127.0.0.2:19042", "127.0.0.3"}, 0, false},
		{[]string{"cassandra.example"}, 0, false},
		{[]string{"[::1]:9043"}, 9043, true},
	} {
		port, ok := sharedPort(c.hosts)
		if port != c.port || ok != c.ok {
			t.Errorf("sharedPort(%q) = %d, %v; want %d, %v", c.hosts, port, ok, c.port, c.ok)
		}
	}
}
