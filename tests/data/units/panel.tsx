import React from "react";

interface PanelProps {
  title: string;
}

export class Panel extends React.Component<PanelProps> {
  toggle(): void {
    this.setState({ open: true });
  }

  render() {
    return <section onClick={() => this.toggle()}>{this.props.title}</section>;
  }
}

export function Badge({ title }: PanelProps) {
  return <span>{title}</span>;
}
