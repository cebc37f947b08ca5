/** A host's name: short, lower case, safe in a file name, a pane id's prefix and a pane title. */
export const HOST_NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;

/** The name that always means this machine: no setting can give it to another. */
export const LOCAL_HOST = "local";
