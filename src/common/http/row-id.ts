/** The shape of a row id a client sends back (a cuid or uuid as we issue them): checked before any query. */
export const ROW_ID = /^[0-9A-Za-z_-]{1,64}$/;
