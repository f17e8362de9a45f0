// What an operator does to jobs and tasks from the UI, as the CLI does it:
// create a job from a spec, roll out a new spec (an update, with its batch
// size, failures allowed and rollback), scale, stop tasks (the SLA asked,
// or forced). The server's answers, refusals included, are shown as given.
import { useRef, useState } from 'preact/hooks';
import { api, type Job, type JobSpec, type UpdateOptions } from '../api';
import { Confirm } from '../components';
import { navigate } from '../router';
import { useCan } from '../session';
import { jobType } from '../util';
import { SpecEditor, fieldErrors, parseSpec, type FieldError } from '../spec-editor';

/** A spec to start from: the fields every job needs. */
const TEMPLATE: JobSpec = {
  name: 'my-job',
  instances: 1,
  task: { command: 'echo', args: ['hello'], resources: { cpu: 0.5, memMb: 64 } },
};

const pretty = (v: unknown) => JSON.stringify(v, null, 2);

/** submit sends a spec and turns a refusal into field errors. */
function useSpecForm(initial: string) {
  const [text, setText] = useState(initial);
  const [errors, setErrors] = useState<FieldError[]>([]);
  const send = async <T,>(call: (spec: JobSpec) => Promise<T>): Promise<T> => {
    setErrors([]);
    const { spec, error } = parseSpec<JobSpec>(text);
    if (!spec) throw new Error(error);
    try {
      return await call(spec);
    } catch (e) {
      const fe = fieldErrors(e);
      if (!fe.length) throw e;
      setErrors(fe);
      throw new Error(`The server refused the spec: ${fe.length === 1 ? 'one problem' : `${fe.length} problems`}, listed under it. Nothing was changed.`);
    }
  };
  return { text, setText, errors, setErrors, send };
}

/** NewJob creates a job from a spec and opens its page. */
export function NewJob() {
  const allowed = useCan('create-job');
  const form = useSpecForm(pretty(TEMPLATE));
  if (!allowed) return null;
  return (
    <Confirm
      label="New job…"
      title="Create a job"
      wide
      onOpen={() => form.setErrors([])}
      body={<p>A spec as the API takes it (JSON; <code>peloton job config</code> prints one as YAML).</p>}
      action={async () => {
        const { job } = await form.send((spec) => api.createJob(spec));
        navigate(`/jobs/${encodeURIComponent(job.id)}`);
      }}
    >
      <SpecEditor value={form.text} onInput={form.setText} errors={form.errors} />
    </Confirm>
  );
}

function numberOrUndefined(v: string): number | undefined {
  return v.trim() === '' ? undefined : Number(v);
}

/** RolloutOptions are the options of an update, as the CLI's job update flags. */
function RolloutOptions({ opts, set }: { opts: UpdateOptions; set: (o: UpdateOptions) => void }) {
  return (
    <div class="options">
      <label>
        Batch size
        <input
          type="number"
          name="batchSize"
          min={1}
          placeholder="all"
          value={opts.batchSize ?? ''}
          onInput={(e) => set({ ...opts, batchSize: numberOrUndefined((e.target as HTMLInputElement).value) })}
        />
      </label>
      <label>
        Failures allowed
        <input
          type="number"
          name="maxFailures"
          min={0}
          value={opts.maxFailures ?? 0}
          onInput={(e) => set({ ...opts, maxFailures: numberOrUndefined((e.target as HTMLInputElement).value) })}
        />
      </label>
      <label>
        Healthy for (s)
        <input
          type="number"
          name="minHealthySeconds"
          min={0}
          value={opts.minHealthySeconds ?? 0}
          onInput={(e) => set({ ...opts, minHealthySeconds: numberOrUndefined((e.target as HTMLInputElement).value) })}
        />
      </label>
      <label>
        Canaries
        <input
          type="number"
          name="canary"
          min={0}
          value={opts.canary ?? 0}
          onInput={(e) => set({ ...opts, canary: numberOrUndefined((e.target as HTMLInputElement).value) })}
        />
      </label>
      <label class="check" title="start the canaries as extra instances beside the job's: none of its instances leaves its config before the promotion">
        <input
          type="checkbox"
          name="canaryExtra"
          checked={!!opts.canaryExtra}
          disabled={!opts.canary}
          onChange={(e) => set({ ...opts, canaryExtra: (e.target as HTMLInputElement).checked })}
        />
        Extra canaries, beside the job
      </label>
      <label class="check">
        <input type="checkbox" checked={!!opts.rollbackOnFailure} onChange={(e) => set({ ...opts, rollbackOnFailure: (e.target as HTMLInputElement).checked })} />
        Roll back on failure
      </label>
      <label class="check">
        <input type="checkbox" checked={!!opts.inPlace} onChange={(e) => set({ ...opts, inPlace: (e.target as HTMLInputElement).checked })} />
        In place
      </label>
      <label class="check">
        <input type="checkbox" checked={!!opts.startPaused} onChange={(e) => set({ ...opts, startPaused: (e.target as HTMLInputElement).checked })} />
        Start paused
      </label>
    </div>
  );
}

/**
 * JobActions: update the spec, scale, stop some tasks. A periodic job has
 * no tasks to stop, and nothing to roll: its next runs take a new spec.
 */
export function JobActions({ job, ended, periodic, onDone }: { job: Job; ended: boolean; periodic?: boolean; onDone: () => void }) {
  const canUpdate = useCan('update-job', { jobId: job.id });
  const canStop = useCan('stop-job', { jobId: job.id });
  const form = useSpecForm('');
  const [opts, setOpts] = useState<UpdateOptions>({ batchSize: 1 });
  const [instances, setInstances] = useState(String(job.spec?.instances ?? 1));
  const [scaleOpts, setScaleOpts] = useState<UpdateOptions>({ batchSize: 1 });
  const which = useRef<HTMLInputElement>(null);
  const force = useRef<HTMLInputElement>(null);
  const [loadError, setLoadError] = useState<string>();
  const loadSpec = () => {
    form.setErrors([]);
    setLoadError(undefined);
    form.setText('');
    api.config(job.id).then(
      (r) => form.setText(pretty(r.spec ?? {})),
      (e: Error) => setLoadError(e.message),
    );
  };
  return (
    <>
      {canUpdate && (
        <Confirm
          label="Update…"
          title={`Update ${job.spec?.name || job.id}`}
          wide
          disabled={ended}
          onOpen={loadSpec}
          body={
            periodic ? (
              <p>The next runs take the new spec; the runs going keep theirs. The schedule may change, not be taken away.</p>
            ) : (
              <p>The new spec is rolled out a batch at a time, never taking more instances down than the job's SLA allows.</p>
            )
          }
          action={async () => {
            if (!form.text) throw new Error(loadError ?? 'the current spec is not read yet');
            await form.send((spec) => api.updateJob(job.id, spec, opts));
            onDone();
          }}
        >
          {loadError && <p class="error">{loadError}</p>}
          <SpecEditor value={form.text} onInput={form.setText} errors={form.errors} />
          {!periodic && <RolloutOptions opts={opts} set={setOpts} />}
        </Confirm>
      )}
      {canUpdate && (
        <Confirm
          label="Scale…"
          title={`Scale ${job.spec?.name || job.id}`}
          disabled={ended}
          onOpen={() => setInstances(String(job.spec?.instances ?? 1))}
          body={
            periodic ? (
              <p>The number of instances of the next runs; the runs going keep theirs.</p>
            ) : (
              <p>An update of the current spec with another number of instances: fewer removes the highest-numbered, under the SLA.</p>
            )
          }
          action={async () => {
            const n = Number(instances);
            if (!Number.isInteger(n) || n < 1) throw new Error('instances: a whole number of at least 1');
            const { spec } = await api.config(job.id);
            await api.updateJob(job.id, { ...spec, instances: n }, scaleOpts);
            onDone();
          }}
        >
          <label class="block">
            Instances
            <input type="number" name="instances" min={1} value={instances} onInput={(e) => setInstances((e.target as HTMLInputElement).value)} />
          </label>
          {!periodic && <RolloutOptions opts={scaleOpts} set={setScaleOpts} />}
        </Confirm>
      )}
      {canStop && !periodic && (
        <Confirm
          label="Stop tasks…"
          title={`Stop tasks of ${job.spec?.name || job.id}`}
          danger
          disabled={ended}
          body={
            <p>
              {jobType(job.spec?.type) !== 'batch'
                ? 'Running instances of a service stop only as far as its SLA allows, unless forced.'
                : 'The tasks are killed and not run again.'}
            </p>
          }
          action={async () => {
            const list = parseInstances(which.current?.value ?? '', job.spec?.instances ?? 0);
            await api.stopTasks(job.id, list, !!force.current?.checked);
            onDone();
          }}
        >
          <label class="block">
            Instances (such as 0 2 5-9)
            <input ref={which} type="text" name="instances" required />
          </label>
          <label class="check">
            <input ref={force} type="checkbox" name="force" /> Force: beyond the SLA
          </label>
        </Confirm>
      )}
    </>
  );
}

/** parseInstances reads "0 2 5-9" (commas or spaces) as instance numbers below n. */
export function parseInstances(text: string, n: number): number[] {
  const out = new Set<number>();
  for (const part of text.split(/[\s,]+/).filter(Boolean)) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) throw new Error(`"${part}" is not an instance number or a range a-b`);
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (hi < lo || hi >= n) throw new Error(`${part}: the job's instances are 0 to ${n - 1}`);
    for (let i = lo; i <= hi; i++) out.add(i);
  }
  if (!out.size) throw new Error('name at least one instance');
  return [...out].sort((a, b) => a - b);
}

/** StopTask stops one task; a service task asks its SLA unless forced. */
export function StopTask({ jobId, instance, ended }: { jobId: string; instance: number; ended: boolean }) {
  const allowed = useCan('stop-job', { jobId });
  const force = useRef<HTMLInputElement>(null);
  if (!allowed) return null;
  return (
    <Confirm
      label="Stop task"
      title={`Stop task ${instance}?`}
      danger
      disabled={ended}
      body={<p>The task is killed and not run again. A running instance of a service stops only as far as its SLA allows, unless forced.</p>}
      action={() => api.stopTasks(jobId, [instance], !!force.current?.checked)}
    >
      <label class="check">
        <input ref={force} type="checkbox" name="force" /> Force: beyond the SLA
      </label>
    </Confirm>
  );
}

/** RestartTask gives one running task a new run on the same config; a
 * service task asks its SLA unless forced. */
export function RestartTask({ jobId, instance, ended }: { jobId: string; instance: number; ended: boolean }) {
  const allowed = useCan('stop-job', { jobId });
  const force = useRef<HTMLInputElement>(null);
  if (!allowed) return null;
  return (
    <Confirm
      label="Restart task"
      title={`Restart task ${instance}?`}
      disabled={ended}
      body={<p>Its current run is killed and a new one starts, on the same config; a restart is not a failure. A running instance of a service restarts only as far as its SLA allows, unless forced.</p>}
      action={() => api.restartTasks(jobId, [instance], !!force.current?.checked)}
    >
      <label class="check">
        <input ref={force} type="checkbox" name="force" /> Force: beyond the SLA
      </label>
    </Confirm>
  );
}
