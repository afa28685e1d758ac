import { getMetadataStorage, type MetadataStorage } from 'class-validator';

type Metadata = ReturnType<MetadataStorage['getTargetValidationMetadatas']>;
type Grouped = ReturnType<MetadataStorage['groupByPropertyName']>;

const cached = new WeakSet<MetadataStorage>();

/**
 * Remembers class-validator's answer to "which rules apply to this class" between validations.
 * class-validator works it out again on every `validate` call, for every nested object: it walks
 * every registered class to find the validated one's ancestors (one `instanceof` per DTO of the
 * application, about 10 µs per request of the list path) and regroups the rules by property.
 * The answer only changes when a rule is registered (a decorated class is loaded), so registering
 * one forgets everything remembered; the remembered arrays and groups are read, never changed, by
 * class-validator's executor. Idempotent: the storage is global, and each ValidationPipe asks.
 */
export function cacheValidationMetadata(storage: MetadataStorage = getMetadataStorage()): void {
  if (cached.has(storage)) return;
  cached.add(storage);
  const lookUp = storage.getTargetValidationMetadatas.bind(storage);
  const group = storage.groupByPropertyName.bind(storage);
  const addValidation = storage.addValidationMetadata.bind(storage);
  const addConstraint = storage.addConstraintMetadata.bind(storage);
  let byTarget = new WeakMap<object, Map<string, Metadata>>();
  let grouped = new WeakMap<Metadata, Grouped>();
  const forget = () => {
    byTarget = new WeakMap();
    grouped = new WeakMap();
  };

  storage.addValidationMetadata = (metadata) => {
    forget();
    addValidation(metadata);
  };
  storage.addConstraintMetadata = (metadata) => {
    forget();
    addConstraint(metadata);
  };
  storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups) => {
    // A schema's name is a string target: those are looked up by name, not remembered.
    if (typeof target !== 'function') return lookUp(target, schema, always, strictGroups, groups);
    const key = `${always ? 1 : 0}${strictGroups ? 1 : 0}${groups === undefined ? '-' : JSON.stringify(groups)}${schema ?? ''}`;
    let forTarget = byTarget.get(target);
    if (!forTarget) byTarget.set(target, (forTarget = new Map()));
    let metadata = forTarget.get(key);
    if (!metadata) forTarget.set(key, (metadata = lookUp(target, schema, always, strictGroups, groups)));
    return metadata;
  };
  storage.groupByPropertyName = (metadata) => {
    let groups = grouped.get(metadata);
    if (!groups) grouped.set(metadata, (groups = group(metadata)));
    return groups;
  };
}
