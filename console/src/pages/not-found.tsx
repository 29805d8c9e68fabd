import { paths } from '../paths.js';

/** Any address under /console that is not a page. */
export function NotFoundPage() {
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        There is no page at this address. Go to the <a href={paths.home}>overview</a>.
      </p>
    </section>
  );
}
