/** DI token of the MediaSource the API streams inbound media through (a MediaSourceByEngine of @app/media). */
export const MEDIA_SOURCE = Symbol('MEDIA_SOURCE');

/** DI token of the operator's MediaStore (MEDIA_STORE), or null when media is not kept. */
export const MEDIA_STORE = Symbol('MEDIA_STORE');
