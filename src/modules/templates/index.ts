/**
 * What other modules may use of templates besides their service and routes: the row the
 * action rules read, the check of `custom` against a template's schema, and the faces and
 * actions the public object list shows.
 */
export type { TemplateRow } from './repo.js';
export { publicFacesAndActions } from './repo.js';
export { validateCustom, type CustomCheck } from './custom-schema.js';
