// A small router: one class, two methods, a helper.
const DEFAULT_METHOD = "GET";

class Router {
  constructor() {
    this.routes = [];
  }

  addRoute(path, handler) {
    this.routes.push({ path, handler });
  }

  dispatch(path) {
    const route = this.routes.find((r) => r.path === path);
    return route ? route.handler() : null;
  }
}

function makeRouter() {
  return new Router();
}

module.exports = { Router, makeRouter, DEFAULT_METHOD };
