// Package auditlog keeps a region's audit log (the gateway's
// gateway.AuditLog) in the region's store (store.AuditStore): the record
// of every mutating call, written before the call's answer goes out, but
// queued in memory, in order, while the store does not answer, so that an
// outage of the store does not hold every call up. It lists records for
// AuditService and prunes the expired ones.
//
// It converts between the v1 API's AuditRecord and model.AuditRecord. It
// imports the v1 API, shard/model and shard/store; it must not import
// gateway (which defines the interface it meets), federation, a store
// backend or the engine.
package auditlog
