/**
 * What other modules may use of templates besides their service and routes: the row the
 * action rules read and its faces, the check of `custom` against a template's schema, and
 * the faces and actions the public object list shows.
 */
export type { Face, TemplateRow } from './types.js';
export { publicFacesAndActions } from './service.js';
export { validateCustom, type CustomCheck } from './custom-schema.js';
export type { TemplateObjects, TemplateSwitchListener } from './service.js';
export { getTemplateForAction } from './service.js';
