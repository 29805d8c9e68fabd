/** A face of a template: how its objects are shown (hashed into every object's chain). */
export interface Face {
  id: string;
  url: string;
  config: Record<string, unknown>;
  content: string;
}

/** A row of `templates`. */
export type TemplateRow = {
  id: string;
  organization_id: string;
  name: string;
  description: string;
  category: string;
  faces: Face[];
  actions: string[];
  custom_schema: Record<string, unknown> | null;
  is_public: boolean;
  /**
   * Counts the changes of name, description, category and faces, what an object's chain
   * hashes (1 at creation); each version is kept in `template_versions`. Set by the database
   * (migration 0020's trigger), whatever writes the row.
   */
  version: number;
  created_at: Date;
  updated_at: Date;
};
