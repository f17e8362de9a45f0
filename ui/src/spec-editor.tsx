// A job spec edited as the API's JSON, with the server's field errors
// shown beside it: the server refuses a bad spec with one line a problem,
// "task.resources.mem_mb: must be > 0"; each is listed with the line of the
// editor it is about, and a click puts the cursor there.
import { useRef } from 'preact/hooks';
import { ApiError } from './api';

export interface FieldError {
  path: string;
  problem: string;
}

/** fieldErrors reads the server's refusal of a spec; [] when it is not one. */
export function fieldErrors(e: unknown): FieldError[] {
  if (!(e instanceof ApiError) || e.status !== 400) return [];
  return e.message
    .split('\n')
    .map((line) => {
      const m = /^([A-Za-z_][\w.[\]]*): (.+)$/.exec(line.trim());
      return m ? { path: m[1], problem: m[2] } : undefined;
    })
    .filter((x): x is FieldError => !!x);
}

const camel = (s: string) => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/**
 * lineOf is the line (from 1) of text where path's deepest field that the
 * text names is: "task.resources.mem_mb" finds "task", then "resources"
 * after it, then "memMb" after that; a field the text lacks ("is
 * required") points at its parent. 0 when none is found.
 */
export function lineOf(text: string, path: string): number {
  let at = -1;
  for (const seg of path.split('.')) {
    const name = camel(seg.replace(/\[\d+\]$/, ''));
    const i = text.indexOf(`"${name}"`, at + 1);
    if (i < 0) break;
    at = i;
  }
  return at < 0 ? 0 : text.slice(0, at).split('\n').length;
}

/** parseSpec reads the editor's text: the spec, or why it is not JSON. */
export function parseSpec<T>(text: string): { spec?: T; error?: string } {
  try {
    const v = JSON.parse(text) as unknown;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return { error: 'the spec must be a JSON object' };
    return { spec: v as T };
  } catch (e) {
    return { error: 'not JSON: ' + String((e as Error).message) };
  }
}

export function SpecEditor({
  value,
  onInput,
  errors,
  label = 'Spec (JSON)',
}: {
  value: string;
  onInput: (v: string) => void;
  errors: FieldError[];
  label?: string;
}) {
  const area = useRef<HTMLTextAreaElement>(null);
  const goTo = (line: number) => {
    const el = area.current;
    if (!el || line < 1) return;
    const lines = value.split('\n');
    const start = lines.slice(0, line - 1).reduce((a, l) => a + l.length + 1, 0);
    el.focus();
    el.setSelectionRange(start, start + lines[line - 1].length);
  };
  const lines = value.split('\n').length;
  return (
    <div class="spec-editor">
      <label class="block">
        {label}
        <textarea
          ref={area}
          name="spec"
          rows={Math.min(24, Math.max(8, lines + 1))}
          spellcheck={false}
          aria-invalid={errors.length > 0 ? 'true' : undefined}
          aria-describedby={errors.length > 0 ? 'spec-errors' : undefined}
          value={value}
          onInput={(e) => onInput((e.target as HTMLTextAreaElement).value)}
        />
      </label>
      {errors.length > 0 && (
        <ul id="spec-errors" class="field-errors" role="alert" aria-label="Problems in the spec" data-testid="field-errors">
          {errors.map((fe) => {
            const line = lineOf(value, fe.path);
            return (
              <li key={fe.path + fe.problem} data-field={fe.path}>
                <code>{fe.path}</code> {fe.problem}
                {line > 0 && (
                  <>
                    {' '}
                    <button type="button" class="link" onClick={() => goTo(line)}>
                      line {line}
                    </button>
                  </>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}
