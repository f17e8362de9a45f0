// Package timeseries keeps figures over time in bounded memory: a Table is
// a set of integer columns sampled together (a pool's reservation, demand,
// allocation, ... of each resource), held at several resolutions at once,
// each in a ring of fixed size. A sample goes into every resolution: the
// finest keeps each sample (10 s for the last hour), the coarser ones the
// mean of the samples in each of their steps (1 min for a day, 10 min for
// the rest of the window). A read takes each stretch of time from the
// finest resolution that still covers it.
//
// Memory is fixed by the window and the number of columns (Table.Bytes),
// whatever the number of samples. Values are integers in their smallest
// unit; a mean is rounded toward zero. A Table is not safe for concurrent
// use; its owner locks it.
//
// It imports the standard library only.
package timeseries
