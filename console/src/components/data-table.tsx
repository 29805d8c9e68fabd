import type { ComponentChild } from 'preact';
import { ErrorMessage } from './error-message.js';
import type { Paged } from './pager.js';
import { Progress } from './progress.js';

/** A column's heading; `{ hidden }` is read by screen readers only (a column of buttons). */
export type Column = string | { hidden: string };

/** The heading of a column of buttons. */
export const ACTIONS: Column = { hidden: 'Actions' };

export interface TableProps<T> {
  columns: readonly Column[];
  /** The cells of a row, in the order of `columns`. */
  cells: (row: T) => ComponentChild[];
  rowKey: (row: T) => string | number;
  /** The first cell is the row's heading (`<th scope="row">`). */
  rowHeader?: boolean;
  rowClass?: (row: T) => string | undefined;
  rowTestId?: (row: T) => string | undefined;
  caption?: ComponentChild;
  captionClass?: string;
  testId?: string;
  /** On a narrow screen each row becomes a card (default); false: a grid that fits anyway. */
  stack?: boolean;
}

function Table<T>(props: TableProps<T> & { rows: readonly T[] }) {
  const { columns, cells, rowKey, rowHeader, stack = true } = props;
  const labels = columns.map((c) => (typeof c === 'string' ? c : undefined));
  // The roles keep a stacked table a table for assistive technology (CSS display drops it).
  return (
    <table data-testid={props.testId} class={stack ? 'stack' : undefined} role="table">
      {props.caption !== undefined && <caption class={props.captionClass}>{props.caption}</caption>}
      <thead role="rowgroup">
        <tr role="row">
          {columns.map((c, i) => (
            <th scope="col" role="columnheader" key={i}>
              {typeof c === 'string' ? c : <span class="visually-hidden">{c.hidden}</span>}
            </th>
          ))}
        </tr>
      </thead>
      <tbody role="rowgroup">
        {props.rows.map((row) => (
          <tr
            key={rowKey(row)}
            role="row"
            class={props.rowClass?.(row)}
            data-testid={props.rowTestId?.(row)}
          >
            {cells(row).map((cell, i) =>
              rowHeader && i === 0 ? (
                <th scope="row" role="rowheader" key={i}>
                  {cell}
                </th>
              ) : (
                <td role="cell" key={i} data-label={labels[i]}>
                  {cell}
                </td>
              ),
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * The console's one table: a heading per column and a row per item. `rows` undefined (not
 * loaded yet): nothing; no rows: `empty` when given, else the table with no rows.
 */
export function DataTable<T>({
  rows,
  empty,
  ...table
}: TableProps<T> & { rows: readonly T[] | undefined; empty?: string }) {
  if (!rows) return null;
  if (rows.length === 0 && empty !== undefined) return <p>{empty}</p>;
  return <Table rows={rows} {...table} />;
}

/**
 * A cursor-paged list (`usePaged`) as a table: its error, "no items", the rows read so far,
 * progress while a page loads, and the button for the next page.
 */
export function PagedTable<T>({
  list,
  empty,
  loading,
  more,
  error,
  busy = false,
  ...table
}: TableProps<T> & {
  list: Paged<T>;
  /** Said when there is nothing to list (nothing said when not given). */
  empty?: string;
  /** The progress label while a page loads. */
  loading: string;
  /** The label of the button for the next page. */
  more: string;
  /** The error to show, when more than the list's own can fail. */
  error?: unknown;
  /** Progress is shown while this is true too. */
  busy?: boolean;
}) {
  return (
    <>
      <ErrorMessage error={error ?? list.error} />
      {empty !== undefined && !list.loading && !list.error && list.items.length === 0 && (
        <p>{empty}</p>
      )}
      {list.items.length > 0 && <Table rows={list.items} {...table} />}
      {(list.loading || busy) && <Progress label={loading} />}
      {list.hasMore && !list.loading && (
        <button type="button" class="secondary" onClick={list.more}>
          {more}
        </button>
      )}
    </>
  );
}
